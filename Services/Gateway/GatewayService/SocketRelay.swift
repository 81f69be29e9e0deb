import InternalProtocol
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle
import ServiceRuntime
import Synchronization

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
        let toClient = ServiceToClient(channel: client.channel)
        socket.push { frame, done in
            guard let written = toClient.write(frame) else { return done() }
            written.whenComplete { _ in done() }
        }
        do {
            try await client.executeThenClose { inbound, outbound in
                do {
                    try await toService(inbound, pongs: outbound)
                } catch {
                    logger.debug("socket stream failed", metadata: ["error": "\(error)"])
                    try? await outbound.write(Self.close(code: SocketCloseCode.goingAway, reason: ""))
                }
                // The client closed or went: the service's answering close still reaches it.
                try? await withTimeout(Self.closeGrace) { await toClient.ended() }
            }
        } catch {
            logger.debug("socket ended", metadata: ["error": "\(error)"])
        }
    }

    /// How long the connection stays open for the other side's answer to a close.
    static let closeGrace = Duration.seconds(2)

    /// Client to service: data frames relayed, pings answered, the close relayed and the
    /// socket's side ended after it (or when the client goes without one).
    private func toService(
        _ inbound: NIOAsyncChannelInboundStream<WebSocketFrame>, pongs: NIOAsyncChannelOutboundWriter<WebSocketFrame>
    ) async throws {
        defer { socket.outbound.finish() }
        for try await frame in inbound {
            guard frame.maskKey != nil else {
                // RFC 6455 §5.1: a client's frames are masked.
                await socket.outbound.close(code: SocketCloseCode.protocolError)
                try await pongs.write(Self.close(code: SocketCloseCode.protocolError, reason: "unmasked frame"))
                return
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
                return
            case .text, .binary, .continuation:
                guard data.readableBytes <= route.bodyLimit else {
                    await socket.outbound.close(code: SocketCloseCode.tooLarge)
                    return
                }
                let kind: SocketFrame.Kind = frame.opcode == .text ? .text : frame.opcode == .binary ? .binary : .continuation
                await socket.outbound.send(SocketFrame(kind: kind, fin: frame.fin, payload: data))
            default:
                await socket.outbound.close(code: SocketCloseCode.protocolError)
                return
            }
        }
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

/// Service to client, driven by the lane rather than a task: each frame the service sends is
/// written to the client's channel as it arrives (its credit returns once written, so a slow
/// client holds at most the socket's window), the service's close is passed on and the
/// connection closed after the client's grace to answer, and a service side that ends without
/// a close (the service or its lane was lost) closes the client with 1001.
final class ServiceToClient: Sendable {
    private struct State {
        var closeSent = false
        var ended = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let channel: any Channel
    private let state = Mutex(State())

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Writes `frame` (nil: the service's side ended) to the client.
    func write(_ frame: SocketFrame?) -> EventLoopFuture<Void>? {
        guard let frame else {
            let first = state.withLock { state in
                defer { state.closeSent = true }
                return !state.closeSent
            }
            guard first else { return nil }
            let channel = self.channel
            channel.writeAndFlush(SocketRelay.close(code: SocketCloseCode.goingAway, reason: "")).whenComplete { _ in
                channel.close(promise: nil)
                self.end()
            }
            return nil
        }
        switch frame.kind {
        case .close:
            state.withLock { $0.closeSent = true }
            let written = channel.writeAndFlush(SocketRelay.close(code: frame.closeCode, reason: frame.closeReason))
            written.whenComplete { _ in self.end() }
            // RFC 6455 §7.1.1: the client may answer the service's close before the connection closes.
            let channel = self.channel
            channel.eventLoop.scheduleTask(in: .seconds(Int64(SocketRelay.closeGrace.components.seconds))) { channel.close(promise: nil) }
            return written
        case .text, .binary, .continuation:
            let opcode: WebSocketOpcode = frame.kind == .text ? .text : frame.kind == .binary ? .binary : .continuation
            return channel.writeAndFlush(WebSocketFrame(fin: frame.fin, opcode: opcode, data: frame.payload))
        }
    }

    /// Returns once the service's side has ended and its close was written (or on cancellation).
    func ended() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiter in
                let done = state.withLock { state in
                    if !state.ended && !Task.isCancelled { state.waiter = waiter }
                    return state.ended || Task.isCancelled
                }
                if done { waiter.resume() }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }

    private func end() {
        state.withLock { state in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }
}
