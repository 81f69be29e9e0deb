import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOHTTP2
import NIOTLS

/// A plaintext server channel that speaks HTTP/1.1 and prior-knowledge HTTP/2 (h2c) on one
/// port: it reads the first bytes of a connection, and the HTTP/2 connection preface selects
/// Hummingbird's HTTP/2 pipeline, anything else its HTTP/1.1 pipeline. Hummingbird offers
/// either on a plaintext port, not both.
package struct HTTP1AndH2CChannel: HTTPChannelHandler {
    /// The configured connection, once its protocol is known.
    package struct Value: ServerChildChannelValue {
        let negotiated: EventLoopFuture<NIONegotiatedHTTPVersion<HTTP1UpgradableChannel.Value, HTTP2Channel.Value>>
        package let channel: any Channel
    }

    private let http1: HTTP1UpgradableChannel
    private let http2: HTTP2Channel
    private let headTimeout: TimeAmount
    package var responder: Responder { http1.responder }

    /// The most bytes an HTTP/1.1 request line and headers may take; beyond it the request is
    /// answered 431 with the JSON error shape.
    package static let headLimit = 64 << 10

    /// How long an HTTP/1.1 connection may take to send a request head unless told.
    package static let defaultHeadTimeout = TimeAmount.seconds(30)

    /// Creates the channel handler; HTTP/1.1 connections may upgrade to WebSockets as
    /// `webSockets` decides (none when nil), and are closed when a request head takes longer
    /// than `headTimeout` to arrive.
    package init(
        responder: @escaping Responder, configuration: HTTP2ChannelConfiguration = .init(),
        webSockets: WebSocketUpgrades? = nil, headTimeout: TimeAmount = defaultHeadTimeout
    ) {
        http1 = HTTP1UpgradableChannel(
            responder: responder,
            idleTimeout: configuration.streamConfiguration.idleTimeout.map { .nanoseconds($0.nanoseconds) },
            headTimeout: headTimeout, webSockets: webSockets)
        http2 = HTTP2Channel(responder: responder, configuration: configuration)
        self.headTimeout = headTimeout
    }

    package func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let negotiation = NIOTypedApplicationProtocolNegotiationHandler<
                NIONegotiatedHTTPVersion<HTTP1UpgradableChannel.Value, HTTP2Channel.Value>
            > { result in
                if case .negotiated("h2") = result {
                    return http2.setup(channel: channel, logger: logger).map { .http2($0) }
                }
                return http1.setup(channel: channel, logger: logger).map { .http1_1($0) }
            }
            try channel.pipeline.syncOperations.addHandler(HTTP2PrefaceDetector())
            try channel.pipeline.syncOperations.addHandler(negotiation)
            // A client that sends nothing, or never completes the first bytes that choose the
            // protocol, is closed like one that never completes a request head.
            let silent = channel.eventLoop.scheduleTask(in: headTimeout) { channel.close(promise: nil) }
            negotiation.protocolNegotiationResult.whenComplete { _ in silent.cancel() }
            return Value(negotiated: negotiation.protocolNegotiationResult, channel: channel)
        }
    }

    package func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1_1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("connection setup failed", metadata: ["error": "\(error)"])
        }
    }
}

/// Buffers a connection's first bytes until they show whether it opens with the HTTP/2
/// preface, announces the answer the way a TLS handler announces ALPN (so the standard
/// negotiation handler configures the pipeline), passes the bytes on and leaves the pipeline.
final class HTTP2PrefaceDetector: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    private var buffered: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var existing = buffered {
            existing.writeBuffer(&bytes)
            buffered = existing
        } else {
            buffered = bytes
        }
        guard let received = buffered else { return }
        let prefix = received.readableBytesView.prefix(Self.preface.count)
        guard prefix.elementsEqual(Self.preface.prefix(prefix.count)) else { return decide(h2: false, context) }
        if prefix.count == Self.preface.count { decide(h2: true, context) }
    }

    private func decide(h2: Bool, _ context: ChannelHandlerContext) {
        context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: h2 ? "h2" : nil))
        if let bytes = buffered {
            buffered = nil
            context.fireChannelRead(wrapInboundOut(bytes))
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

extension HTTPServerBuilder {
    /// HTTP/1.1 (with WebSocket upgrades when `webSockets` is given, request heads due within
    /// `headTimeout`) and prior-knowledge HTTP/2 on one plaintext port.
    package static func http1AndH2C(
        configuration: HTTP2ChannelConfiguration = .init(), webSockets: WebSocketUpgrades? = nil,
        headTimeout: TimeAmount = HTTP1AndH2CChannel.defaultHeadTimeout
    ) -> HTTPServerBuilder {
        .init { responder in
            HTTP1AndH2CChannel(
                responder: responder, configuration: configuration, webSockets: webSockets, headTimeout: headTimeout)
        }
    }
}
