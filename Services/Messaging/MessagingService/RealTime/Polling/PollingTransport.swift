import InternalProtocol
import ServiceRuntime
import Synchronization

/// One real-time session carried by Engine.IO's long-polling: the client's POSTs bring packets,
/// its GETs take what the session sent since the last one (waiting a while when there is
/// nothing). A client may upgrade to a WebSocket: what is still waiting goes down the socket
/// first, then everything else, in order; a GET still waiting is answered with a noop.
final class PollingTransport: RTWriter {
    /// The session id the client polls with.
    let id: String
    /// Who opened it: only the same caller polls, posts to or upgrades it.
    let owner: Owner
    let version: EngineIOVersion
    /// Packets waiting for a poll at most; a session sending more waits for the client (and
    /// its own queue overflows if the client never comes).
    let limit: Int
    /// When the client was last heard from (a poll, a post, a frame).
    let heard: SocketLiveness
    private let state = Mutex(State())

    private typealias Poll = CheckedContinuation<[String]?, Never>

    private struct State {
        var waiting: [String] = []
        var closed = false
        /// The client has been given the close packet.
        var closeTaken = false
        /// The session the client's packets go to, until it ends.
        var session: RTSession?
        /// The socket the client upgraded to, once it did.
        var socket: ServedSocket?
        /// While what waited goes down the new socket, senders wait (order is kept).
        var flushing = false
        /// The GET waiting for packets, if any.
        var poll: Poll?
        /// Which GET that is (a hold that ends ends only its own).
        var pollNumber: UInt64 = 0
        /// Senders waiting for room.
        var senders: [CheckedContinuation<Void, Never>] = []

        /// Everything waiting, taken.
        mutating func take() -> [String] {
            defer { waiting = [] }
            return waiting
        }
    }

    private enum SendStep {
        case sent(Poll?, [String])
        case socket(ServedSocket)
        case wait
        case closed
    }

    /// The caller a session belongs to: the app, the API key its requests name, and the user
    /// session (a token's stored id) they carry.
    struct Owner: Hashable, Sendable {
        let app: String
        let apiKey: String?
        let keyKind: APIKeyKind
        let sessionId: String?

        init(_ identity: Identity, apiKey: String?) {
            app = identity.appId
            self.apiKey = apiKey
            keyKind = identity.keyKind
            sessionId = identity.sessionId
        }
    }

    init(id: String, owner: Owner, version: EngineIOVersion, limit: Int, heard: SocketLiveness) {
        self.id = id
        self.owner = owner
        self.version = version
        self.limit = limit
        self.heard = heard
    }

    /// The process is shutting down: the session closes, what it queued sent first.
    func shutDown() {
        state.withLock { $0.session }?.outbox.finish(.goingAway)
    }

    /// Sends what the client posts (and, once it upgraded, what its socket brings) to `session`.
    func deliver(to session: RTSession) {
        state.withLock { $0.session = session }
    }

    // MARK: The session's side

    func send(_ text: String) async -> Bool {
        while true {
            let step: SendStep = state.withLock { state in
                if state.closed { return .closed }
                if let socket = state.socket, !state.flushing { return .socket(socket) }
                guard !state.flushing, state.waiting.count < limit else { return .wait }
                state.waiting.append(text)
                guard let poll = state.poll else { return .sent(nil, []) }
                state.poll = nil
                return .sent(poll, state.take())
            }
            switch step {
            case .sent(let poll, let packets):
                poll?.resume(returning: packets)
                return true
            case .socket(let socket): return await socket.outbound.send(text)
            case .closed: return false
            case .wait: await room()
            }
        }
    }

    func close(code: UInt16, reason: String) async {
        let (poll, packets, waiters, socket, session):
            (Poll?, [String], [CheckedContinuation<Void, Never>], ServedSocket?, RTSession?) =
                state.withLock { state in
                    state.closed = true
                    state.closeTaken = state.poll != nil
                    defer {
                        state.poll = nil
                        state.senders = []
                        state.session = nil
                    }
                    // Without a poll waiting, what is left (and the close) goes to the next one.
                    return (
                        state.poll, state.poll == nil ? [] : state.take(), state.senders, state.socket, state.session
                    )
                }
        poll?.resume(returning: packets + [EnginePacket.close.encoded])
        session?.received(.closed)
        if let socket { await socket.end(code: code, reason: reason) }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once a sender may try again.
    private func room() async {
        await withCheckedContinuation { sender in
            let ready = state.withLock { state in
                guard !state.closed, state.flushing || (state.socket == nil && state.waiting.count >= limit) else {
                    return true
                }
                state.senders.append(sender)
                return false
            }
            if ready { sender.resume() }
        }
    }

    private func wakeSenders() {
        let senders = state.withLock { state in
            defer { state.senders = [] }
            return state.senders
        }
        for sender in senders { sender.resume() }
    }

    // MARK: The client's side

    /// Packets the client posted.
    func post(_ packets: [String]) {
        heard.received()
        let session = state.withLock { $0.session }
        for packet in packets { session?.received(.text(packet)) }
    }

    /// What the session sent since the last poll, waiting up to `hold` when nothing has been
    /// (then empty); the close packet last once the session has ended; nil when it ended and
    /// its close was already taken.
    func poll(hold: Duration) async -> [String]? {
        heard.received()
        defer { wakeSenders() }
        let number = state.withLock { state in
            state.pollNumber += 1
            return state.pollNumber
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: hold)
            self?.endPoll(number)
        }
        defer { timer.cancel() }
        let packets: [String]? = await withCheckedContinuation { poll in
            let (previous, ready): (Poll?, [String]??) = state.withLock { state in
                if state.closed {
                    // The end: what is left and the close, once; nothing after.
                    guard !state.closeTaken else { return (nil, .some(nil)) }
                    state.closeTaken = true
                    return (nil, .some(state.take() + [EnginePacket.close.encoded]))
                }
                if !state.waiting.isEmpty { return (nil, .some(state.take())) }
                guard state.pollNumber == number else { return (nil, .some([])) }
                defer { state.poll = poll }
                return (state.poll, nil)
            }
            // Engine.IO allows one poll at a time: an earlier one ends with nothing.
            previous?.resume(returning: [])
            if let ready { poll.resume(returning: ready) }
        }
        // The packet that woke the poll seldom comes alone (the open packet and the namespace
        // connect, an answer and the next event): what followed at once goes in the same answer.
        guard var answer = packets, !answer.isEmpty, answer.last != EnginePacket.close.encoded else { return packets }
        await Task.yield()
        answer += state.withLock { state in state.closed || state.poll != nil ? [] : state.take() }
        return answer
    }

    /// Ends poll `number` with nothing, if it is still the one waiting (its hold is over).
    private func endPoll(_ number: UInt64) {
        let poll: Poll? = state.withLock { state in
            guard state.pollNumber == number else { return nil }
            defer { state.poll = nil }
            return state.poll
        }
        poll?.resume(returning: [])
    }

    /// The client moved to `socket`: what waits goes down it first and a waiting poll gets a
    /// noop; from then on the socket carries everything.
    func upgrade(to socket: ServedSocket) async {
        let (waiting, poll) = state.withLock { state in
            state.flushing = true
            state.socket = socket
            defer { state.poll = nil }
            return (state.take(), state.poll)
        }
        poll?.resume(returning: [EnginePacket.noop.encoded])
        for packet in waiting { _ = await socket.outbound.send(packet) }
        state.withLock { $0.flushing = false }
        wakeSenders()
    }

    /// What the upgraded socket brought; `done` once the session has handled it.
    func received(_ incoming: RTIncoming, done: @escaping @Sendable () -> Void) {
        heard.received()
        guard let session = state.withLock({ $0.session }) else { return done() }
        session.received(incoming, done: done)
    }
}
