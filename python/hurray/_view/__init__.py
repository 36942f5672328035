"""`hurray view`: what a .hrry file holds, as a web page and as notebook HTML.

- `model`: the file's structure read from its index and descriptors alone
  (no tensor data), and each tensor's values summarised on demand, in bounded
  memory (`FileModel`, `tensor_stats`, `compare`);
- `render`: HTML and inline SVG made from those (`file_html`, `tensor_html`,
  the histograms, the sparsity picture, a composite's placement), shared by the
  page and by notebooks;
- `server`: a small threaded HTTP server on 127.0.0.1 serving one page
  (`page.html`, its script and style inline) and JSON endpoints.

Nothing here is imported by `import hurray`; NumPy is imported when values are
summarised.
"""
