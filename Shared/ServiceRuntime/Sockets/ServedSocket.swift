import InternalProtocol
import Synchronization

/// A socket a service serves without a task of its own (``PublicRoutes/socket(_:permission:options:accept:)``):
/// the client's frames are pushed to the service as they arrive, it sends on ``outbound``, and
/// it calls ``end(code:reason:)`` when it is done; the socket's side then ends once the
/// gateway's has. The gateway holds each frame to the route's size limit.
package final class ServedSocket: Sendable {
    private struct State {
        var receiving = false
        var ended = false
        var clientEnded = false
    }

    /// The service's side of the socket.
    package let outbound: SocketOutbound
    private let socket: LaneSocket
    private let state = Mutex(State())

    init(_ socket: LaneSocket) {
        self.socket = socket
        outbound = SocketOutbound(socket)
        socket.onShutdown { [weak self] in self?.refuse(code: SocketCloseCode.goingAway, reason: "") }
    }

    /// Runs `handler`, instead of closing the socket with 1001 at once, when the process shuts
    /// down (to flush what the service has queued first, for instance).
    package func onShutdown(_ handler: @escaping @Sendable () -> Void) {
        socket.onShutdown(handler)
    }

    /// Pushes the client's frames to `receiver` as they arrive: its data frames and its close,
    /// then nil (after the close, or when the client was lost). A frame's credit returns when
    /// its `done` is called, so a service that takes its time slows the client, never queues
    /// more than the socket's window.
    package func receive(_ receiver: @escaping @Sendable (SocketFrame?, _ done: @escaping @Sendable () -> Void) -> Void)
    {
        state.withLock { $0.receiving = true }
        socket.push { [self] frame, done in
            if frame == nil { clientEnded() }
            receiver(frame, done)
        }
    }

    /// The service is done: the socket closes (with `code` and `reason` unless it already
    /// closed), and its side ends once the gateway's has.
    package func end(code: UInt16 = SocketCloseCode.normal, reason: String = "") async {
        await outbound.close(code: code, reason: reason)
        let (receiving, finish) = state.withLock { state in
            state.ended = true
            return (state.receiving, state.clientEnded)
        }
        if !receiving { receive { _, done in done() } }
        if finish { socket.finish() }
    }

    /// Closes the socket at once with `code` and `reason`, whatever the client sends meanwhile.
    package func refuse(code: UInt16, reason: String) {
        Task { await end(code: code, reason: reason) }
    }

    private func clientEnded() {
        let finish = state.withLock { state in
            state.clientEnded = true
            return state.ended
        }
        if finish { socket.finish() }
    }
}
