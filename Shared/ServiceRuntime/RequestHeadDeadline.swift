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
    /// Requests whose head arrived and whose answer has not been written out (more than one when
    /// a client pipelines).
    private var answering = 0
    /// Once out of the pipeline (a WebSocket took the connection), it times nothing.
    private var removed = false

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
        removed = true
        stop()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stop()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            answering += 1
            stop()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case .end = unwrapOutboundIn(data) else { return context.write(data, promise: promise) }
        // Timed from the moment the answer's end has left, not when it was queued: closing
        // earlier would drop what a slow reader has not taken yet.
        let written = promise ?? context.eventLoop.makePromise()
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        written.futureResult.whenSuccess {
            let (handler, context) = loopBound.value
            guard !handler.removed else { return }
            handler.answering = max(0, handler.answering - 1)
            if handler.answering == 0 { handler.start(context) }
        }
        context.write(data, promise: written)
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
