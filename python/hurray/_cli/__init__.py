"""The `hurray` command (docs/reference/cli.md): convert between checkpoint formats, list,
compare and inspect files.

    hurray convert SRC DST [--dequantize DTYPE] [--drop-kv] [--quiet]
    hurray ls FILE [--json]
    hurray diff A B [--quiet]
    hurray verify FILE... [--json] [--require-checksums] [--quiet]
    hurray inspect FILE [hurray-inspect options]
    hurray view FILE [B] [--port P] [--no-browser]
    hurray serve FILE... [--host H] [--port P] [--max-clients N] [--writable]
                 [--max-put-bytes BYTES] [--transcode-limit BYTES]

Exit status: 0 success (diff: the same), 1 diff: different / convert: a tensor
or KV entry the target cannot hold exactly (refused, nothing written) / verify:
a file is damaged, 2 an error (usage, a file that cannot be read or written).

Importing this module imports the standard library only; each subcommand
imports what it needs (NumPy, the gguf package, torch) when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

__all__ = ["main"]

EXIT_OK, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a program its pipe closed


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="hurray",
        description="Convert, list, compare and inspect tensor files: .hrry, .safetensors "
                    "(files and sharded model directories), .gguf, PyTorch checkpoints "
                    "(.pt/.pth/.bin), .npy/.npz.",
        epilog="exit status: 0 success (diff: the same), 1 different (diff), refused "
               "(convert: the target cannot hold a tensor exactly) or damaged (verify), "
               "2 error. `hurray COMMAND --help` for a command's options; the guide's "
               "page \"The hurray command\" shows them at work and the reference page "
               "\"The hurray command: every option\" says what each one does (the hurray "
               "documentation).")
    p.add_argument("--version", action="version", version=_version())
    r = p.add_argument_group("URL sources (s3://, http(s)://, fsspec URLs)")
    r.add_argument("--storage-options", metavar="JSON", type=_json_object,
                   help="a JSON object passed as storage_options= (s3: endpoint_url, region, "
                        "key, secret, token, anon; http: headers, timeout, retries; fsspec: "
                        "its file system's options); default: the AWS_* variables for s3://")
    r.add_argument("--workers", metavar="N", type=int,
                   help="range requests at once (default 8, or $HURRAY_WORKERS)")
    r.add_argument("--part-size", metavar="BYTES", type=int,
                   help="the size of each range request (default 8 MiB, at least 4096)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    c = sub.add_parser("convert", help="convert SRC to DST (formats from the file names)",
                       description="Convert SRC to DST, tensor by tensor. Refuses (exit 1) "
                                   "what DST cannot hold exactly, naming it.")
    c.add_argument("src", metavar="SRC")
    c.add_argument("dst", metavar="DST")
    c.add_argument("--dequantize", metavar="DTYPE",
                   help="convert the tensors DST cannot hold exactly (quantized, or of a type "
                        "DST lacks) to this float type: float32, float16, bfloat16, float64")
    c.add_argument("--drop-kv", action="store_true",
                   help="leave out the KV entries DST cannot hold (instead of refusing)")
    c.add_argument("-q", "--quiet", action="store_true", help="no progress, no summary")
    ls = sub.add_parser("ls", help="list the tensors and the KV of a file")
    ls.add_argument("file", metavar="FILE")
    ls.add_argument("--json", action="store_true", help="one JSON document")
    d = sub.add_parser("diff", help="compare two files (any formats); exit 1 if they differ")
    d.add_argument("a", metavar="A")
    d.add_argument("b", metavar="B")
    d.add_argument("-q", "--quiet", action="store_true", help="only the exit status")
    v = sub.add_parser("verify", help="check .hrry files: structure and data checksums; "
                                      "exit 1 if one is damaged",
                       description="Check each .hrry FILE: every structural rule of the "
                                   "format, then the CRC-32C of every tensor's descriptor and "
                                   "data when the file records them (hurray.save does by "
                                   "default). Exit 0 all sound, 1 one is damaged, 2 one "
                                   "cannot be checked.")
    v.add_argument("files", metavar="FILE", nargs="+")
    v.add_argument("--json", action="store_true", help="one JSON document (a list for "
                   "several files)")
    v.add_argument("--require-checksums", action="store_true",
                   help="a file that records no data checksums counts as damaged (exit 1)")
    v.add_argument("-q", "--quiet", action="store_true", help="print only the files that fail")
    i = sub.add_parser("inspect", help="show a .hrry file field by field (hurray-inspect)")
    i.add_argument("file", metavar="FILE")
    i.add_argument("args", nargs=argparse.REMAINDER, metavar="...",
                   help="hurray-inspect options (--json, --brief, --hex, --preview[=N])")
    w = sub.add_parser("view", help="see what a .hrry file holds in the browser (two files: "
                                     "side by side)",
                       description="Serve a page showing FILE (a path or a URL) on "
                                   "127.0.0.1: its summary, its tensors as a tree, each "
                                   "tensor's values on demand. With B, the two files side by "
                                   "side (the visual `hurray diff`). Runs until interrupted.")
    w.add_argument("file", metavar="FILE")
    w.add_argument("other", metavar="B", nargs="?", help="a second file to compare FILE with")
    w.add_argument("--port", type=int, default=0,
                   help="the port to serve on (default: any free one; the URL is printed)")
    w.add_argument("--no-browser", action="store_true", help="print the URL, open no browser")
    sv = sub.add_parser("serve", help="serve the tensors of .hrry files over the network "
                                      "(hurray://host:port) until SIGINT or SIGTERM",
                        description="Serve every tensor of the .hrry FILEs by name over the "
                                    "network transport of the specification (clients: "
                                    "hurray.connect(\"hurray://HOST:PORT\"), hurray ls "
                                    "hurray://HOST:PORT). Prints the URL served; logs one line "
                                    "per request on stderr. The protocol has no "
                                    "authentication: the default host is 127.0.0.1.")
    sv.add_argument("files", metavar="FILE", nargs="+")
    sv.add_argument("--host", default="127.0.0.1",
                    help="the address to listen on (default 127.0.0.1; 0.0.0.0: every "
                         "interface, with a warning)")
    sv.add_argument("--port", type=int, default=7470,
                    help="the TCP port (default 7470; 0: a free one, printed)")
    sv.add_argument("--max-clients", metavar="N", type=int, default=64,
                    help="connections served at once (default 64; more wait their turn)")
    sv.add_argument("--writable", action="store_true",
                    help="accept pushes (TENSOR_PUT) into memory, --max-put-bytes in all")
    sv.add_argument("--max-put-bytes", metavar="BYTES", type=int, default=1 << 30,
                    help="bytes of pushed tensors kept at most (default 1 GiB)")
    sv.add_argument("--transcode-limit", metavar="BYTES", type=int, default=256 << 20,
                    help="bytes of tensors transcoded to the row- or column-major layout a "
                         "client prefers, held at once by all connections (default 256 MiB; "
                         "0: never transcode)")
    return p


def _json_object(text: str) -> dict:
    import json
    try:
        value = json.loads(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"not JSON ({e}): {text!r}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"a JSON object ({{...}}) is wanted, not {text!r}")
    return value


def _version() -> str:
    """What `hurray --version` prints: the package, the C library it runs on,
    the format it writes and the Python it runs in."""
    import platform

    from .. import __version__, _hurray
    return (f"hurray {__version__} (libhurray {_hurray.library_version}, "
            f"{platform.python_implementation()} {platform.python_version()})")


def main(argv: Sequence[str] | None = None) -> int:
    """Runs the `hurray` command with `argv` (default sys.argv[1:]); returns the
    exit status."""
    p = _parser()
    args = p.parse_args(list(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        p.print_help(sys.stderr)
        return EXIT_ERROR
    from ._errors import CliError, Refused
    from ._urls import REMOTE
    REMOTE.clear()
    REMOTE.update({k: v for k, v in (("storage_options", args.storage_options),
                                              ("workers", args.workers),
                                              ("part_size", args.part_size)) if v is not None})
    try:
        from . import _commands
        if args.command == "convert":
            return _commands.convert(args.src, args.dst, dequantize=args.dequantize,
                                     quiet=args.quiet, drop_kv=args.drop_kv)
        if args.command == "ls":
            return _commands.ls(args.file, as_json=args.json)
        if args.command == "diff":
            return _commands.diff(args.a, args.b, quiet=args.quiet)
        if args.command == "verify":
            return _commands.verify(args.files, as_json=args.json, quiet=args.quiet,
                                    require_checksums=args.require_checksums)
        if args.command == "view":
            from .._view.server import serve as view
            paths = [args.file] + ([args.other] if args.other else [])
            return view(paths, port=args.port, browser=not args.no_browser, options=REMOTE)
        if args.command == "serve":
            from ._serve import serve as serve_net
            return serve_net(args.files, host=args.host, port=args.port,
                             max_clients=args.max_clients, writable=args.writable,
                             max_put_bytes=args.max_put_bytes,
                             transcode_limit=args.transcode_limit)
        return _commands.inspect(args.file, list(args.args))
    except BrokenPipeError:
        # the reader of our output went away (`hurray ls --json f | head`): stop
        # quietly, as `git log | head` does; what is left is sent nowhere so the
        # interpreter's final flush cannot raise again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return EXIT_BROKEN_PIPE
    except Refused as e:
        print(f"hurray {args.command}: refused: {e}", file=sys.stderr)
        return EXIT_DIFFERENT
    except CliError as e:
        print(f"hurray {args.command}: {e}", file=sys.stderr)
        return EXIT_ERROR
    except ImportError as e:
        print(f"hurray {args.command}: {e.name or e} is needed for this file "
              f"(pip install {e.name or 'it'})", file=sys.stderr)
        return EXIT_ERROR
    except (OSError, ValueError) as e:
        print(f"hurray {args.command}: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"hurray {args.command}: interrupted", file=sys.stderr)
        return 130
