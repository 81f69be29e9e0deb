import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// How the HTTP/1.1 side of a public port answers WebSocket upgrade requests: `decide` sees
/// each upgrade request (head only) and either accepts it with the relay to run on the
/// upgraded connection, or refuses it with the response the client gets instead.
package struct WebSocketUpgrades: Sendable {
    /// Sets an upgraded connection's pipeline up to carry its frames (on its event loop; no
    /// task serves the connection after the upgrade).
    package typealias Relay = @Sendable (any Channel) throws -> Void

    /// The answer to an upgrade request.
    package enum Decision: Sendable {
        /// Upgrade and run `relay`; `abandon` releases what was prepared for it when the
        /// connection ends before the upgrade completes.
        case upgrade(Relay, abandon: @Sendable () -> Void)
        /// Answer with this response instead.
        case refuse(Response)
    }

    /// The largest WebSocket frame a client may send.
    package let maximumFrameSize: Int
    let decide: @Sendable (Request, any Channel, Logger) async -> Decision

    /// Upgrades as `decide` says, to frames of at most `maximumFrameSize` bytes.
    package init(maximumFrameSize: Int, decide: @escaping @Sendable (Request, any Channel, Logger) async -> Decision) {
        self.maximumFrameSize = maximumFrameSize
        self.decide = decide
    }
}

/// HTTP/1.1 with WebSocket upgrades: NIO's upgrade handler sees the first request; an upgrade
/// request goes to ``WebSocketUpgrades`` (a refusal is answered and the connection closed),
/// everything else to Hummingbird's HTTP/1.1 handling.
struct HTTP1UpgradableChannel: Sendable {
    enum Outcome: Sendable {
        case webSocket
        case http(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let outcome: EventLoopFuture<Outcome>
        let decision: NIOLockedValueBox<WebSocketUpgrades.Decision?>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let idleTimeout: Duration?
    /// How long a connection may take to send a request head (``RequestHeadDeadline``).
    let headTimeout: TimeAmount
    private static let malformedHandlerName = "malformed-request-responder"
    private static let headDeadlineName = "request-head-deadline"
    let webSockets: WebSocketUpgrades?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let decision = NIOLockedValueBox<WebSocketUpgrades.Decision?>(nil)
            var upgraders: [any NIOTypedHTTPServerProtocolUpgrader<Outcome>] = []
            if let webSockets {
                upgraders.append(upgrader(webSockets, decision: decision, logger: logger))
            }
            let idleTimeout = self.idleTimeout
            let upgrade = NIOTypedHTTPServerUpgradeConfiguration<Outcome>(
                upgraders: upgraders,
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try pipeline.addHandler(HTTPConnectionStateHandler(idleTimeout: idleTimeout, logger: logger))
                        return .http(
                            try NIOAsyncChannel(
                                wrappingChannelSynchronously: channel,
                                configuration: .init(isOutboundHalfClosureEnabled: true)))
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration(upgradeConfiguration: upgrade)
            configuration.enablePipelining = false
            configuration.enableErrorHandling = false
            configuration.enableResponseHeaderValidation = false
            configuration.decoderConfiguration.maxHeaderFieldSize = HTTP1AndH2CChannel.headLimit
            configuration.decoderConfiguration.maxHeaderListSize = HTTP1AndH2CChannel.headLimit
            let outcome = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(
                configuration: configuration)
            // After the upgrade handler, so it sees the decoder's refusals of a first request too.
            try channel.pipeline.syncOperations.addHandler(
                MalformedRequestResponder(headLimit: HTTP1AndH2CChannel.headLimit), name: Self.malformedHandlerName)
            try channel.pipeline.syncOperations.addHandler(
                RequestHeadDeadline(limit: headTimeout), name: Self.headDeadlineName)
            return Value(outcome: outcome, decision: decision, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.outcome.get() {
            case .webSocket:
                // The relay in the channel's pipeline carries the connection from here.
                return
            case .http(let http):
                if case .refuse(let refusal) = value.decision.withLockedValue({ $0 }) {
                    await refuse(refusal, on: http)
                } else {
                    let responder = webSockets == nil ? self.responder : Self.redirectingUpgrades(self.responder)
                    await HTTP1Channel(responder: responder).handle(value: http, logger: logger)
                }
            }
        } catch {
            if case .upgrade(_, let abandon) = value.decision.withLockedValue({ $0 }) { abandon() }
            logger.debug("connection setup failed", metadata: ["error": "\(error)"])
        }
    }

    /// Answers a refused upgrade with `refusal` and closes: NIO's upgrade handler has consumed
    /// the request, so Hummingbird's handling would wait for one that never comes.
    private func refuse(_ refusal: Response, on http: NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>) async {
        try? await http.executeThenClose { _, outbound in
            var head = refusal.head
            head.headerFields[.connection] = "close"
            if let length = refusal.body.contentLength { head.headerFields[.contentLength] = String(length) }
            try await outbound.write(.head(head))
            try await refusal.body.write(PartsWriter(outbound: outbound))
        }
    }

    /// A later request on a kept-alive connection can no longer upgrade (NIO's upgrade handler
    /// sees only the first), and NIO's decoder stops reading at an upgrade request's head: such
    /// a request is sent to try again on a new connection (307 to itself, then the connection
    /// closes), as Hummingbird's WebSocket support does.
    private static func redirectingUpgrades(_ responder: @escaping HTTPChannelHandler.Responder)
        -> HTTPChannelHandler.Responder
    {
        { request, writer, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, writer, channel)
            }
            let location = request.uri.query.map { "\(request.uri.path)?\($0)" } ?? request.uri.path
            try await writer.writeResponse(
                HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw ChannelError.outputClosed
        }
    }

    private func upgrader(
        _ webSockets: WebSocketUpgrades, decision: NIOLockedValueBox<WebSocketUpgrades.Decision?>, logger: Logger
    ) -> NIOTypedWebSocketServerUpgrader<Outcome> {
        NIOTypedWebSocketServerUpgrader(
            maxFrameSize: webSockets.maximumFrameSize,
            shouldUpgrade: { channel, head in
                let promise = channel.eventLoop.makePromise(of: HTTPHeaders?.self)
                promise.completeWithTask {
                    let request = Request(
                        head: try HTTPRequest(head, secure: false, splitCookie: false),
                        body: .init(buffer: ByteBuffer()))
                    let answer = await webSockets.decide(request, channel, logger)
                    decision.withLockedValue { $0 = answer }
                    guard case .upgrade = answer else { return nil }
                    return HTTPHeaders()
                }
                return promise.futureResult
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    // The refusal handler speaks HTTP; from here on the connection carries frames.
                    channel.pipeline.syncOperations.removeHandler(name: Self.malformedHandlerName, promise: nil)
                    channel.pipeline.syncOperations.removeHandler(name: Self.headDeadlineName, promise: nil)
                    guard case .upgrade(let relay, _) = decision.withLockedValue({ $0 }) else {
                        throw ChannelError.inappropriateOperationForState
                    }
                    try relay(channel)
                    return .webSocket
                }
            })
    }
}

/// Writes a response body as HTTP parts on an async channel.
private struct PartsWriter: ResponseBodyWriter {
    let outbound: NIOAsyncChannelOutboundWriter<HTTPResponsePart>

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await outbound.write(.body(buffer))
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await outbound.write(.end(trailingHeaders))
    }
}
