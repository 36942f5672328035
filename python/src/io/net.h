/*
 * io/net.h - the network transport from Python (layer 3): the private
 * classes hurray._hurray._NetServer and _NetClient, over which
 * hurray/_net.py builds hurray.serve and hurray.connect.
 */
#ifndef HURRAY_PY_IO_NET_H
#define HURRAY_PY_IO_NET_H

#include "util/state.h"

/* Creates the two classes and adds them to module m. */
int hrpy_net_init(PyObject *m, HrpyState *st);

#endif /* HURRAY_PY_IO_NET_H */
