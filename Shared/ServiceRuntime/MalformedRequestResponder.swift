import Foundation
import HummingbirdCore
import InternalProtocol
import NIOCore
import NIOHTTP1

/// Answers an HTTP/1.1 request the decoder could not read (a request line or headers beyond the
/// decoder's limits, malformed syntax) with the JSON error shape and closes the connection.
/// Hummingbird's own answer to these is an empty 400.
///
/// It sits after NIO's HTTP/1.1 decoder and upgrade handler (so it speaks NIO's HTTP types), sees the decoder's error before Hummingbird does, and answers
/// only between requests: mid-answer it would interleave with the answer being written, so
/// there it only closes.
final class MalformedRequestResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let headLimit: Int
    private var answering = false
    private var refused = false

    init(headLimit: Int) {
        self.headLimit = headLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        if case .head = unwrapInboundIn(data) { answering = true }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answering = false }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Once refused, the decoder complains about every later byte; those are the rest of
        // the refused request.
        guard !refused else { return }
        guard let parserError = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        guard !answering else {
            context.close(promise: nil)
            return
        }
        refused = true
        let envelope = Self.envelope(for: parserError, headLimit: headLimit)
        let body = ByteBuffer(bytes: (try? JSONEncoder.sortedKeys.encode(envelope)) ?? Data())
        let head = HTTPResponseHead(
            version: .http1_1, status: .init(statusCode: envelope.status),
            headers: [
                "content-type": "application/json", "content-length": String(body.readableBytes), "connection": "close",
            ])
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
            // Closing at once while the client is still sending the oversized head would reset
            // the connection and could discard the answer before the client reads it: end the
            // output, drain the input, and close for good after a grace period.
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.scheduleTask(in: Self.lingering) { channel.close(promise: nil) }
        }
    }

    /// How long a refused connection keeps draining the client's bytes before it closes.
    static let lingering = TimeAmount.seconds(2)

    /// 431 for a head beyond the limit, 400 for anything else the decoder refused.
    static func envelope(for error: HTTPParserError, headLimit: Int) -> ErrorEnvelope {
        if case .headerOverflow = error {
            return ErrorEnvelope(
                code: 431,
                message: "The request line and headers exceed \(headLimit) bytes; send long queries in a POST body",
                status: 431)
        }
        return ErrorEnvelope(code: 400, message: "Malformed HTTP request", status: 400)
    }
}
