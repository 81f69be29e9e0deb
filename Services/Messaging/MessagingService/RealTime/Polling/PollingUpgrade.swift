import ServiceRuntime
import Synchronization

/// A polling session's move onto a WebSocket (Engine.IO's probe: `2probe`, `3probe`, then
/// `5`), driven by the socket's frames: after the upgrade packet the socket's frames go to the
/// session, and the session's end ends the socket.
final class PollingUpgrade: Sendable {
    private enum Stage {
        case probe, upgrade, forwarding, refused
    }

    private let transport: PollingTransport
    private let socket: ServedSocket
    private let stage = Mutex(Stage.probe)

    private init(transport: PollingTransport, socket: ServedSocket) {
        self.transport = transport
        self.socket = socket
    }

    /// Moves session `sid` of `app` onto `socket`, or closes the socket (1002) when no such
    /// session lives here.
    static func start(_ sid: String, on socket: ServedSocket, caller: PollingTransport.Owner, sessions: PollingSessions)
    {
        Task {
            guard let transport = await sessions.find(sid, for: caller) else {
                return socket.refuse(code: SocketCloseCode.protocolError, reason: "Session ID unknown")
            }
            let upgrade = PollingUpgrade(transport: transport, socket: socket)
            socket.receive { frame, done in upgrade.received(frame, done: done) }
            socket.onShutdown { transport.shutDown() }
        }
    }

    private func received(_ frame: SocketFrame?, done: @escaping @Sendable () -> Void) {
        let incoming = RTIncoming(frame)
        let current: Stage = stage.withLock { stage in
            defer {
                switch (stage, incoming) {
                case (.probe, .text("2probe")): stage = .upgrade
                case (.upgrade, .text(EnginePacket.upgrade.encoded)): stage = .forwarding
                case (.probe, _), (.upgrade, _): stage = .refused
                case (.forwarding, _), (.refused, _): break
                }
            }
            return stage
        }
        switch (current, incoming) {
        case (.probe, .text("2probe")):
            done()
            Task { await socket.outbound.send(.text("3probe")) }
        case (.upgrade, .text(EnginePacket.upgrade.encoded)):
            done()
            Task { await transport.upgrade(to: socket) }
        case (.probe, _), (.upgrade, _):
            done()
            socket.refuse(code: SocketCloseCode.protocolError, reason: "Expected the Engine.IO upgrade probe")
        case (.forwarding, _):
            transport.received(incoming, done: done)
        case (.refused, _):
            done()
        }
    }
}
