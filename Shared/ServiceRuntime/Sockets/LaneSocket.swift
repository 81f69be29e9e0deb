import NIOCore
import Synchronization

/// One public WebSocket on a socket lane, at either end: the handler of its ``SocketState``.
/// Each direction may have at most a ``CreditWindow`` in flight (a larger frame goes alone),
/// and the receiver gives credit back as it reads, so one slow socket never holds up the lane's
/// others and nothing queues without bound. Either end ends its side with ``finish()``; the
/// socket leaves the lane once both have.
final class LaneSocket: Sendable {
    /// Bytes one direction may have in flight.
    static let window = CreditWindow.size

    /// The service's answer to an opening.
    typealias Answer = SocketAnswer
    /// Takes each frame the other end sends (``SocketSink``).
    typealias Sink = SocketSink
    private typealias State = SocketState<
        CheckedContinuation<SocketFrame?, Never>, CheckedContinuation<Bool?, Never>, CheckedContinuation<Answer, Never>
    >

    let id: UInt32
    let lane: SocketLane
    private let state = Mutex(State())

    init(id: UInt32, lane: SocketLane) {
        self.id = id
        self.lane = lane
    }

    /// What a frame costs against the window.
    static func cost(_ frame: SocketFrame) -> Int { State.cost(frame) }

    // MARK: Reading

    /// The next frame the other end sent; nil once it has finished and all it sent was read.
    func next() async -> SocketFrame? {
        let frame: SocketFrame? = await withTaskCancellationHandler {
            await withCheckedContinuation { reader in
                switch state.withLock({ $0.read(parking: reader, cancelled: Task.isCancelled) }) {
                case .frame(let frame): reader.resume(returning: frame)
                case .end: reader.resume(returning: nil)
                case .parked: break
                }
            }
        } onCancel: {
            state.withLock { $0.takeReader() }?.resume(returning: nil)
        }
        if let frame { consumed(Self.cost(frame)) }
        return frame
    }

    private func consumed(_ cost: Int) {
        if let credit = state.withLock({ $0.consumed(cost) }) {
            lane.writer.enqueue(.credit(socket: id, bytes: UInt32(credit)))
        }
    }

    // MARK: Pushing

    /// Pushes every frame the other end sends to `sink` from now on (those already queued
    /// first), instead of keeping them for ``next()``.
    func push(to sink: @escaping Sink) {
        state.withLock { $0.push(to: sink) }
        flush()
    }

    /// Hands what is queued to the sink, in order, unless another caller is doing so.
    private func flush() {
        while let delivery = state.withLock({ $0.beginDelivery() }) {
            for frame in delivery.frames {
                let cost = Self.cost(frame)
                delivery.sink(frame) { self.consumed(cost) }
            }
            if delivery.end { delivery.sink(nil) {} }
            state.withLock { $0.endDelivery(delivery) }
        }
    }

    /// Runs `handler` when the process shuts down (see ``shutDown()``).
    func onShutdown(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.setOnShutdown(handler) }
    }

    /// The process is shutting down: the socket's shutdown handler runs, once.
    func shutDown() {
        state.withLock { $0.takeOnShutdown() }?()
    }

    // MARK: Sending

    /// Sends `frame` once the window has room; false when it cannot go (this end finished, or
    /// the other end stopped reading).
    func send(_ frame: SocketFrame) async -> Bool {
        let cost = Self.cost(frame)
        while true {
            switch await reserve(cost) {
            case true?: return await lane.writer.send(.frame(socket: id, frame))
            case false?: return false
            case nil: continue
            }
        }
    }

    /// Takes `cost` from the credit: true when taken, false when nothing more may be sent, nil
    /// when credit arrived while waiting (try again).
    private func reserve(_ cost: Int) async -> Bool? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (sender: CheckedContinuation<Bool?, Never>) in
                if let now = state.withLock({ $0.reserve(cost, parking: sender, cancelled: Task.isCancelled) }) {
                    sender.resume(returning: now)
                }
            }
        } onCancel: {
            for sender in state.withLock({ $0.takeSenders() }) { sender.resume(returning: false) }
        }
    }

    /// Sends `frame` now if the window has room, without waiting: true when sent, false when
    /// there is no room (``whenRoom(_:)`` says when to try again), nil when nothing more may be
    /// sent. For one caller at a time.
    func trySend(_ frame: SocketFrame) -> Bool? {
        let room = state.withLock { $0.trySend(Self.cost(frame)) }
        if room == true { lane.writer.enqueue(.frame(socket: id, frame)) }
        return room
    }

    /// Calls `waiter` once, when credit next arrives or nothing more may be sent.
    func whenRoom(_ waiter: @escaping @Sendable () -> Void) {
        if !state.withLock({ $0.whenRoom(waiter) }) { waiter() }
    }

    /// Ends this end's side: nothing more is sent on the socket.
    func finish() {
        guard let ending = state.withLock({ $0.finish() }) else { return }
        lane.writer.enqueue(.finish(socket: id))
        release(ending)
        if ending.leaves { lane.remove(id) }
    }

    /// Ends this end's side and stops reading: what still arrives is dropped.
    func abandon() {
        state.withLock { $0.abandon() }
        finish()
    }

    /// Tells parked senders that nothing more may be sent, and calls the room waiter.
    private func release(_ ending: State.Ending) {
        for sender in ending.senders { sender.resume(returning: false) }
        ending.roomWaiter?()
    }

    // MARK: Opening

    /// The service's answer to this socket's opening.
    func answer() async -> Answer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { opener in
                if let now = state.withLock({ $0.answer(parking: opener, cancelled: Task.isCancelled) }) {
                    opener.resume(returning: now)
                }
            }
        } onCancel: {
            state.withLock { $0.takeOpener() }?.resume(returning: .lost)
        }
    }

    // MARK: From the lane's reader

    /// The other end sent `frame`.
    func received(_ frame: SocketFrame) {
        switch state.withLock({ $0.received(frame) }) {
        case .read(let reader): reader.resume(returning: frame)
        case .queued: flush()
        case .dropped: lane.writer.enqueue(.credit(socket: id, bytes: UInt32(Self.cost(frame))))
        }
    }

    /// The other end may send `bytes` more.
    func credited(_ bytes: Int) {
        let woken = state.withLock { $0.credited(bytes) }
        // Woken senders try again, in turn.
        for sender in woken.senders { sender.resume(returning: nil) }
        woken.roomWaiter?()
    }

    /// The service answered the opening.
    func answered(_ answer: Answer) {
        state.withLock { $0.answered(answer) }?.resume(returning: answer)
    }

    /// The other end finished its side (or the lane ended: `lost`).
    func peerEnded(lost: Bool = false) {
        let ending = state.withLock { $0.peerEnded(lost: lost) }
        ending.reader?.resume(returning: nil)
        flush()
        ending.opener?.resume(returning: .lost)
        release(ending)
        if ending.leaves { lane.remove(id) }
    }
}
