import DequeModule
import Foundation
import InternalProtocol
import ServiceRuntime
import Synchronization

/// One real-time session, driven by what arrives rather than by tasks of its own: the
/// transport hands it the client's packets as they come, a short-lived task feeds them to the
/// connection in order (only while there are some), the outbox takes replies and deliveries to
/// the transport the same way, and one timer for all sessions (``RTSessions``) keeps the
/// heartbeat. An idle session costs its state, not the memory of tasks waiting on it.
final class RTSession: Sendable {
    private struct Incoming {
        let packet: RTIncoming
        let done: @Sendable () -> Void
    }

    private struct State {
        /// The connection, while no task is feeding it.
        var connection: RTConnection?
        var queue = Deque<Incoming>()
        var feeding = false
        /// The session has ended: what arrives is dropped.
        var over = false

    }

    let id: UUID
    let outbox: RTOutbox
    let version: EngineIOVersion
    /// When the client was last heard from.
    let heard: SocketLiveness
    private let sessions: RTSessions
    private let onEnd: @Sendable () async -> Void
    private let state: Mutex<State>

    /// A session for `connection`, whose transport `onEnd` ends once the session is over.
    init(
        _ connection: RTConnection, heard: SocketLiveness, sessions: RTSessions,
        onEnd: @escaping @Sendable () async -> Void
    ) {
        id = connection.id
        outbox = connection.outbox
        version = connection.version
        self.heard = heard
        self.sessions = sessions
        self.onEnd = onEnd
        state = Mutex(State(connection: connection))
    }

    /// Sends the open packets (offering `upgrades`) and joins the heartbeat.
    func start(upgrades: [String] = []) {
        RTMetrics.connections(by: 1)
        let connection = state.withLock { $0.connection }
        sessions.add(self, identity: connection?.identity)
        connection?.open(upgrades: upgrades)
    }

    /// What the client sent (or that it closed, or went); `done` once it has been handled.
    func received(_ packet: RTIncoming, done: @escaping @Sendable () -> Void = {}) {
        // Heard when it arrives, not when a busy process gets to it.
        if case .text = packet { heard.received() }
        let feed: Bool? = state.withLock { state in
            guard !state.over else { return nil }
            state.queue.append(Incoming(packet: packet, done: done))
            guard !state.feeding else { return false }
            state.feeding = true
            return true
        }
        if feed == nil { done() }
        if feed == true { Task { await self.feed() } }
    }

    /// Feeds what arrived to the connection, in order, until nothing waits or the session ends.
    private func feed() async {
        guard var connection = state.withLock({ $0.connection.take() }) else { return }
        while true {
            await outbox.roomForReplies()
            let next: Incoming? = state.withLock { state in
                guard let next = state.queue.popFirst() else {
                    state.feeding = false
                    state.connection = connection
                    return nil
                }
                return next
            }
            guard let next else { return }
            defer { next.done() }
            let user = connection.identity.userId
            switch next.packet {
            case .closed:
                return await end(&connection)
            case .unreadable:
                outbox.finish(.protocolError)
                return await end(&connection)
            case .reauthorize:
                await connection.reauthorize()
            case .text(let text):
                guard await connection.receive(text) else {
                    outbox.finish(.protocolError)
                    return await end(&connection)
                }
            }
            // Only a token change or a revocation changes the user: no lock per ordinary frame.
            if connection.identity.userId != user { sessions.identify(self, as: connection.identity) }
        }
    }

    /// The session is over: keeps where its subscriptions stood once what it queued has gone
    /// (or, for a client that went, been dropped), then ends the transport.
    private func end(_ connection: inout RTConnection) async {
        let dropped = state.withLock { state in
            state.over = true
            defer { state.queue = [] }
            return state.queue.map(\.done)
        }
        dropped.forEach { $0() }
        let standing = await connection.dropAll()
        // A client that closed or was lost receives nothing more; when the server ended the
        // session (shutdown, overflow, a protocol error, silence) what is queued still goes.
        outbox.finish(.abandoned)
        await outbox.closed()
        await connection.keepResumePoints(standing, unsent: outbox.unsent)
        sessions.remove(self)
        RTMetrics.connections(by: -1)
        await onEnd()
    }

    /// One heartbeat: Engine.IO 4 pings; a client silent for interval and timeout together is
    /// closed.
    func beat(_ settings: RealTimeSettings) {
        if heard.sinceReceived > settings.silenceLimit {
            outbox.send(.close)
            outbox.finish(.normal)
        } else if version == .v4 {
            outbox.send(.ping(""))
        }
    }
}
