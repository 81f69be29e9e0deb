import DequeModule
import InternalProtocol
import NIOCore
import NIOWebSocket
import ServiceRuntime
import Synchronization

/// Relays one public WebSocket and its socket on a lane to the service, frame by frame in both
/// directions, from the connection's channel pipeline rather than a task: data frames as they are
/// (fragments included), the close handshake end to end (either side's code reaches the other),
/// pings answered here. The client's frames go out as the socket's window allows; while it is
/// full the connection stops reading, so TCP pushes back on the client. The service's frames are
/// written as the lane brings them (``ServiceToClient``). An idle socket costs its channel and
/// its state, no task.
final class SocketRelay: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// How long the connection stays open for the other side's answer to a close.
    static let closeGrace = TimeAmount.seconds(2)

    private let socket: InternalSocket
    private let route: RouteDescriptor
    /// The client's frames the socket's window has no room for yet.
    private var waiting = Deque<SocketFrame>()
    /// The client has closed, gone or broken the protocol: it sends nothing more.
    private var clientDone = false
    private var released = false
    private var toClient: ServiceToClient?

    init(socket: InternalSocket, route: RouteDescriptor) {
        self.socket = socket
        self.route = route
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let toClient = ServiceToClient(channel: context.channel)
        self.toClient = toClient
        socket.push { frame, done in
            guard let written = toClient.write(frame) else { return done() }
            written.whenComplete { _ in done() }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard !clientDone else { return }
        guard frame.maskKey != nil else {
            // RFC 6455 §5.1: a client's frames are masked.
            context.writeAndFlush(
                wrapOutboundOut(Self.close(code: SocketCloseCode.protocolError, reason: "unmasked frame")), promise: nil
            )
            return clientEnded(sending: .close(code: SocketCloseCode.protocolError), context: context)
        }
        let data = frame.unmaskedData
        switch frame.opcode {
        case .ping:
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .pong, data: data)), promise: nil)
        case .pong:
            return
        case .connectionClose:
            var payload = data
            let code = payload.readInteger(as: UInt16.self) ?? SocketCloseCode.noStatus
            clientEnded(
                sending: .close(code: code, reason: payload.readString(length: payload.readableBytes) ?? ""),
                context: context)
        case .text, .binary, .continuation:
            guard data.readableBytes <= route.bodyLimit else {
                return clientEnded(sending: .close(code: SocketCloseCode.tooLarge), context: context)
            }
            let kind: SocketFrame.Kind =
                frame.opcode == .text ? .text : frame.opcode == .binary ? .binary : .continuation
            send(SocketFrame(kind: kind, fin: frame.fin, payload: data), context: context)
        default:
            clientEnded(sending: .close(code: SocketCloseCode.protocolError), context: context)
        }
    }

    /// The client went: the service hears the end of its side.
    func channelInactive(context: ChannelHandlerContext) {
        clientDone = true
        waiting.removeAll()
        release()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    /// The gateway is shutting down: the socket closes with 1001 through the service, so both
    /// ends see the handshake (and the connection closes after the grace if the service is gone).
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is ChannelShouldQuiesceEvent else { return context.fireUserInboundEventTriggered(event) }
        // The gateway is the one going away: the client hears 1001 from it, whatever the service answers.
        toClient?.close(code: SocketCloseCode.goingAway)
        if !clientDone { clientEnded(sending: .close(code: SocketCloseCode.goingAway), context: context) }
        let channel = context.channel
        context.eventLoop.scheduleTask(in: Self.closeGrace * 2) { channel.close(promise: nil) }
    }

    private func clientEnded(sending close: SocketFrame, context: ChannelHandlerContext) {
        clientDone = true
        toClient?.clientClosed()
        send(close, context: context)
    }

    /// Sends `frame` to the service, after those still waiting for room.
    private func send(_ frame: SocketFrame, context: ChannelHandlerContext) {
        waiting.append(frame)
        drain(context: context)
    }

    private func drain(context: ChannelHandlerContext) {
        while let next = waiting.first {
            switch socket.trySend(next) {
            case true?:
                waiting.removeFirst()
            case nil:
                waiting.removeAll()
            case false?:
                // Reading stops until the service returns credit.
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                let resume = NIOLoopBound((self, context), eventLoop: context.eventLoop)
                socket.whenRoom {
                    resume.eventLoop.execute {
                        let (relay, context) = resume.value
                        relay.resumed(context: context)
                    }
                }
                return
            }
        }
        if clientDone { socket.finish() }
    }

    private func resumed(context: ChannelHandlerContext) {
        drain(context: context)
        guard waiting.isEmpty, !clientDone, context.channel.isActive else { return }
        context.channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in }
        context.read()
    }

    private func release() {
        guard !released else { return }
        released = true
        socket.release()
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
/// client holds at most the socket's window), the first close (the service's, or the gateway's
/// when it goes away) is passed on and the connection closed once the client has answered it (or
/// after its grace to), and a service side that ends without a close (the service or its lane was
/// lost) closes the client with 1001.
final class ServiceToClient: Sendable {
    private struct State {
        var closeSent = false
        /// The close has reached the client.
        var closeWritten = false
        var clientClosed = false
    }

    private let channel: any Channel
    private let state = Mutex(State())

    init(channel: any Channel) {
        self.channel = channel
    }

    /// Writes `frame` (nil: the service's side ended) to the client.
    func write(_ frame: SocketFrame?) -> EventLoopFuture<Void>? {
        guard let frame else {
            guard firstClose() else { return nil }
            let channel = self.channel
            channel.writeAndFlush(SocketRelay.close(code: SocketCloseCode.goingAway, reason: "")).whenComplete { _ in
                channel.close(promise: nil)
            }
            return nil
        }
        switch frame.kind {
        case .close:
            return close(code: frame.closeCode, reason: frame.closeReason)
        case .text, .binary, .continuation:
            let opcode: WebSocketOpcode = frame.kind == .text ? .text : frame.kind == .binary ? .binary : .continuation
            return channel.writeAndFlush(WebSocketFrame(fin: frame.fin, opcode: opcode, data: frame.payload))
        }
    }

    /// Sends the client a close with `code` unless one was sent, then closes the connection once
    /// the client has answered it, or after its grace to.
    @discardableResult
    func close(code: UInt16, reason: String = "") -> EventLoopFuture<Void>? {
        guard firstClose() else { return nil }
        let channel = self.channel
        let written = channel.writeAndFlush(SocketRelay.close(code: code, reason: reason))
        written.whenComplete { _ in
            let clientClosed = self.state.withLock { state in
                state.closeWritten = true
                return state.clientClosed
            }
            if clientClosed { channel.close(promise: nil) }
        }
        // RFC 6455 §7.1.1: the client may answer the close before the connection closes.
        channel.eventLoop.scheduleTask(in: SocketRelay.closeGrace) { channel.close(promise: nil) }
        return written
    }

    /// The client has closed: once a close is written to it, the connection closes (or after the
    /// grace, if the service never answers).
    func clientClosed() {
        let closeWritten = state.withLock { state in
            state.clientClosed = true
            return state.closeWritten
        }
        let channel = self.channel
        if closeWritten {
            channel.close(promise: nil)
        } else {
            channel.eventLoop.scheduleTask(in: SocketRelay.closeGrace) { channel.close(promise: nil) }
        }
    }

    /// Whether no close has been sent yet (and marks one sent).
    private func firstClose() -> Bool {
        state.withLock { state in
            defer { state.closeSent = true }
            return !state.closeSent
        }
    }
}
