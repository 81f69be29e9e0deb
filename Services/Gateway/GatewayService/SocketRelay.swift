import InternalProtocol
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle
import ServiceRuntime

/// Relays one public WebSocket and its socket on a lane to the service, frame by frame in both
/// directions: data frames as they are (fragments included), the close handshake end to end
/// (either side's code reaches the other), pings answered here. It ends when the service's side
/// ends.
struct SocketRelay: Sendable {
    let socket: InternalSocket
    let route: RouteDescriptor

    /// Runs the relay on the upgraded connection `client` until the socket ends. When the
    /// gateway shuts down, the socket is closed with 1001 through the service, so both ends
    /// see the handshake.
    func run(_ client: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, logger: Logger) async {
        defer { socket.release() }
        await withGracefulShutdownHandler {
            await relay(client, logger: logger)
        } onGracefulShutdown: { [socket] in
            Task { await socket.outbound.close(code: SocketCloseCode.goingAway) }
        }
    }

    private func relay(_ client: NIOAsyncChannel<WebSocketFrame, WebSocketFrame>, logger: Logger) async {
        do {
            try await client.executeThenClose { inbound, outbound in
                do {
                    try await withThrowingTaskGroup(of: Side.self) { group in
                        group.addTask { try await toService(inbound, pongs: outbound) }
                        group.addTask { try await toClient(outbound) }
                        var finished: Set<Side> = []
                        while let side = try await group.next(), side != .grace {
                            finished.insert(side)
                            if finished.count == 2 { break }
                            // RFC 6455 §7.1.1: the client may answer the service's close before
                            // the connection closes.
                            if side == .service { group.addTask { try await Task.sleep(for: Self.closeGrace); return .grace } }
                        }
                        group.cancelAll()
                    }
                } catch {
                    logger.debug("socket stream failed", metadata: ["error": "\(error)"])
                    try? await outbound.write(Self.close(code: SocketCloseCode.goingAway, reason: ""))
                }
            }
        } catch {
            logger.debug("socket ended", metadata: ["error": "\(error)"])
        }
    }

    /// Which side of the relay finished.
    private enum Side: Sendable, Hashable {
        case client, service, grace
    }

    /// How long the connection stays open for the client's answer to the service's close.
    static let closeGrace = Duration.seconds(2)

    /// Client to service: data frames relayed, pings answered, the close relayed and the
    /// stream's side ended after it (or when the client goes without one). The relay goes on
    /// until the service answers the close.
    private func toService(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, pongs: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    ) async throws -> Side {
        defer { socket.outbound.finish() }
        for try await frame in inbound {
            guard frame.maskKey != nil else {
                // RFC 6455 §5.1: a client's frames are masked.
                await socket.outbound.close(code: SocketCloseCode.protocolError)
                try await pongs.write(Self.close(code: SocketCloseCode.protocolError, reason: "unmasked frame"))
                return .client
            }
            let data = frame.unmaskedData
            switch frame.opcode {
            case .ping:
                try await pongs.write(WebSocketFrame(fin: true, opcode: .pong, data: data))
            case .pong:
                continue
            case .connectionClose:
                var payload = data
                let code = payload.readInteger(as: UInt16.self) ?? SocketCloseCode.noStatus
                await socket.outbound.close(code: code, reason: payload.readString(length: payload.readableBytes) ?? "")
                return .client
            case .text, .binary, .continuation:
                guard data.readableBytes <= route.bodyLimit else {
                    await socket.outbound.close(code: SocketCloseCode.tooLarge)
                    return .client
                }
                let kind: SocketFrame.Kind = frame.opcode == .text ? .text : frame.opcode == .binary ? .binary : .continuation
                await socket.outbound.send(SocketFrame(kind: kind, fin: frame.fin, payload: data))
            default:
                await socket.outbound.close(code: SocketCloseCode.protocolError)
                return .client
            }
        }
        return .client
    }

    /// Service to client: data frames and the close as they come. A stream that ends without a
    /// close (the service was lost) closes the client with 1001.
    private func toClient(_ outbound: NIOAsyncChannelOutboundWriter<WebSocketFrame>) async throws -> Side {
        let frames = socket.inbound()
        while let frame = try await frames.next() {
            switch frame.kind {
            case .close:
                try await outbound.write(Self.close(code: frame.closeCode, reason: frame.closeReason))
                return .service
            case .text, .binary, .continuation:
                let opcode: WebSocketOpcode = frame.kind == .text ? .text : frame.kind == .binary ? .binary : .continuation
                try await outbound.write(WebSocketFrame(fin: frame.fin, opcode: opcode, data: frame.payload))
            }
        }
        try await outbound.write(Self.close(code: SocketCloseCode.goingAway, reason: ""))
        return .service
    }

    /// A close frame to the client; a code of 1005 (none was sent) goes as a close without one.
    static func close(code: UInt16, reason: String) -> WebSocketFrame {
        var payload = ByteBuffer()
        if code != SocketCloseCode.noStatus {
            payload.writeInteger(code)
            payload.writeString(reason)
        }
        return WebSocketFrame(fin: true, opcode: .connectionClose, data: payload)
    }
}
