import NIOCore

/// Closes a connection on which nothing was read or written for a while, as reported by an
/// `IdleStateHandler` in front of it: it bounds TLS connections (a client that never finishes
/// its handshake, an HTTP/2 connection left open) the way ``ConnectionHandler`` bounds HTTP/1.1 ones.
final class IdleConnectionCloser: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .all {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}
