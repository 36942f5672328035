/*
 * What the network transport's server table (src/net/server.c) needs of the
 * connection loop (src/net/socket.c) beyond include/hurray/net.h. Never
 * installed.
 */
#ifndef HURRAY_INTERNAL_NET_H
#define HURRAY_INTERNAL_NET_H

#include "hurray/net.h"
#include "internal/common.h"

/*
 * Server: `fn(ctx)` is called by hurray_net_server_serve on `c` each time a
 * response ends (sent whole, answered with ERROR, or broken off), in the
 * serving thread, before the next message is read. The table gives back
 * there what the response held (a transcoded copy and its share of the
 * transcoding budget) instead of at the connection's next request, which an
 * idle client may never send. NULL `fn`: none.
 */
HURRAY_INTERNAL void hurray__net_on_response_end(HurrayNetConnection *c, void (*fn)(void *ctx),
                                                 void *ctx);

#endif /* HURRAY_INTERNAL_NET_H */
