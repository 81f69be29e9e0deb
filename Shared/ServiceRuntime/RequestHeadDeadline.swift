import NIOCore
import NIOHTTP1

/// Closes an HTTP/1.1 connection that does not send a whole request head within `limit` of
/// opening or of its previous answer's end: a client trickling its headers a byte at a time
/// (slowloris) or holding an idle connection open cannot keep it forever. Only a connection
/// between requests is timed; one whose request is being answered never is.
///
/// It sits beside ``MalformedRequestResponder`` (after NIO's decoder, speaking NIO's HTTP types)
/// and leaves the pipeline with it when a connection becomes a WebSocket.
final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let limit: TimeAmount
    private var timer: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) { stop() }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { start(context) }
        context.write(data, promise: promise)
    }

    private func start(_ context: ChannelHandlerContext) {
        stop()
        let channel = context.channel
        timer = context.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
    }

    private func stop() {
        timer?.cancel()
        timer = nil
    }
}
