import DequeModule
import NIOCore
import Synchronization

/// One public WebSocket on a socket lane, at either end: the frames the other end sent, queued
/// until read, and the credit to send more. Each direction may have at most ``window`` bytes in
/// flight (a larger frame goes alone), and the receiver returns credit as it reads, so one slow
/// socket never holds up the lane's others and nothing queues without bound. Either end ends its
/// side with ``finish()``; the socket leaves the lane once both have.
final class LaneSocket: Sendable {
    /// Bytes one direction may have in flight.
    static let window = 256 << 10

    /// The service's answer to an opening.
    enum Answer: Sendable {
        case accepted
        case refused(status: Int, body: ByteBuffer)
        /// The lane ended, or the wait was cancelled.
        case lost
    }

    private struct State {
        var queue = Deque<SocketFrame>()
        var reader: CheckedContinuation<SocketFrame?, Never>?
        var consumed = 0
        var credit = LaneSocket.window
        var senders: [CheckedContinuation<Bool?, Never>] = []
        var answer: Answer?
        var opener: CheckedContinuation<Answer, Never>?
        /// The other end sent its finish (or the lane ended).
        var peerFinished = false
        /// This end sent its finish.
        var finished = false
        /// This end reads no more: what arrives is dropped and credited at once.
        var abandoned = false
        /// Where frames go as they arrive, when they are pushed rather than read.
        var sink: Sink?
        /// A caller is handing queued frames to the sink.
        var flushing = false
        /// The sink has been told that the other end finished.
        var endDelivered = false
        /// What closes the socket when the process shuts down, for sockets no task serves.
        var onShutdown: (@Sendable () -> Void)?
        /// Who waits, without a task, for credit (see ``trySend(_:)``).
        var roomWaiter: (@Sendable () -> Void)?

    }

    /// Takes each frame the other end sends, as it arrives, and nil once the other end has
    /// finished (or the lane ended); the frame's credit returns when the sink calls `done`.
    typealias Sink = @Sendable (SocketFrame?, _ done: @escaping @Sendable () -> Void) -> Void

    let id: UInt32
    let lane: SocketLane
    private let state = Mutex(State())

    init(id: UInt32, lane: SocketLane) {
        self.id = id
        self.lane = lane
    }

    /// What a frame costs against the window.
    static func cost(_ frame: SocketFrame) -> Int { frame.payload.readableBytes + 16 }

    // MARK: Reading

    /// The next frame the other end sent; nil once it has finished and all it sent was read.
    func next() async -> SocketFrame? {
        let frame: SocketFrame? = await withTaskCancellationHandler {
            await withCheckedContinuation { reader in
                let ready: SocketFrame?? = state.withLock { state in
                    if let frame = state.queue.popFirst() { return .some(frame) }
                    if state.peerFinished || Task.isCancelled { return .some(nil) }
                    state.reader = reader
                    return nil
                }
                if let ready { reader.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }?.resume(returning: nil)
        }
        if let frame { consumed(Self.cost(frame)) }
        return frame
    }

    /// Counts `cost` bytes of frames as read: credit goes back once half the window has been.
    private func consumed(_ cost: Int) {
        let credit: Int? = state.withLock { state in
            state.consumed += cost
            guard state.consumed >= Self.window / 2, !state.peerFinished else { return nil }
            defer { state.consumed = 0 }
            return state.consumed
        }
        if let credit { lane.writer.enqueue(.credit(socket: id, bytes: UInt32(credit))) }
    }

    // MARK: Pushing

    /// Pushes every frame the other end sends to `sink` from now on (those already queued
    /// first), instead of keeping them for ``next()``.
    func push(to sink: @escaping Sink) {
        state.withLock { $0.sink = sink }
        flush()
    }

    /// Hands what is queued to the sink, in order, unless another caller is doing so (that one
    /// takes what arrived meanwhile too).
    private func flush() {
        while true {
            let step: (Sink, [SocketFrame], Bool)? = state.withLock { state in
                guard let sink = state.sink, !state.flushing else { return nil }
                let frames = Array(state.queue)
                state.queue = []
                let end = state.peerFinished && !state.endDelivered
                if end { state.endDelivered = true }
                guard !frames.isEmpty || end else { return nil }
                state.flushing = true
                return (sink, frames, end)
            }
            guard let (sink, frames, end) = step else { return }
            for frame in frames {
                let cost = Self.cost(frame)
                sink(frame) { self.consumed(cost) }
            }
            if end { sink(nil) {} }
            state.withLock { state in
                state.flushing = false
                // Nothing follows the end: the sink, and what it holds, can go.
                if end { state.sink = nil }
            }
        }
    }

    /// Runs `handler` when the process shuts down (see ``shutDown()``).
    func onShutdown(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.onShutdown = handler }
    }

    /// The process is shutting down: the socket's shutdown handler runs, once.
    func shutDown() {
        state.withLock { state in
            defer { state.onShutdown = nil }
            return state.onShutdown
        }?()
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
                let ready: Bool?? = state.withLock { state in
                    if state.finished || Task.isCancelled { return .some(false) }
                    if state.credit >= cost || state.credit == Self.window {
                        state.credit -= cost
                        return .some(true)
                    }
                    state.senders.append(sender)
                    return nil
                }
                if let ready { sender.resume(returning: ready) }
            }
        } onCancel: {
            releaseSenders()
        }
    }

    /// Sends `frame` now if the window has room, without waiting: true when sent, false when
    /// there is no room (``whenRoom(_:)`` says when to try again), nil when nothing more may be
    /// sent. For one caller at a time.
    func trySend(_ frame: SocketFrame) -> Bool? {
        let cost = Self.cost(frame)
        let room: Bool? = state.withLock { state in
            if state.finished { return nil }
            guard state.credit >= cost || state.credit == Self.window else { return false }
            state.credit -= cost
            return true
        }
        if room == true { lane.writer.enqueue(.frame(socket: id, frame)) }
        return room
    }

    /// Calls `waiter` once, when credit next arrives or nothing more may be sent.
    func whenRoom(_ waiter: @escaping @Sendable () -> Void) {
        let now = state.withLock { state in
            if state.finished { return true }
            state.roomWaiter = waiter
            return false
        }
        if now { waiter() }
    }

    private func wakeRoomWaiter() {
        state.withLock { state in
            defer { state.roomWaiter = nil }
            return state.roomWaiter
        }?()
    }

    /// Ends this end's side: nothing more is sent on the socket.
    func finish() {
        let send = state.withLock { state in
            defer { state.finished = true }
            return !state.finished
        }
        guard send else { return }
        lane.writer.enqueue(.finish(socket: id))
        releaseSenders()
        wakeRoomWaiter()
        leaveIfDone()
    }

    /// Ends this end's side and stops reading: what still arrives is dropped.
    func abandon() {
        state.withLock { state in
            state.abandoned = true
            state.queue = []
        }
        finish()
    }

    // MARK: Opening

    /// The service's answer to this socket's opening.
    func answer() async -> Answer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { opener in
                let ready: Answer? = state.withLock { state in
                    if let answer = state.answer { return answer }
                    if Task.isCancelled { return .lost }
                    state.opener = opener
                    return nil
                }
                if let ready { opener.resume(returning: ready) }
            }
        } onCancel: {
            state.withLock { state in
                defer { state.opener = nil }
                return state.opener
            }?.resume(returning: .lost)
        }
    }

    // MARK: From the lane's reader

    /// The other end sent `frame`.
    func received(_ frame: SocketFrame) {
        let (reader, dropped): (CheckedContinuation<SocketFrame?, Never>?, Bool) = state.withLock { state in
            if state.abandoned || state.peerFinished { return (nil, true) }
            if let reader = state.reader {
                state.reader = nil
                return (reader, false)
            }
            state.queue.append(frame)
            return (nil, false)
        }
        if dropped {
            lane.writer.enqueue(.credit(socket: id, bytes: UInt32(Self.cost(frame))))
        } else if let reader {
            reader.resume(returning: frame)
        } else {
            flush()
        }
    }

    /// The other end may send `bytes` more.
    func credited(_ bytes: Int) {
        let senders = state.withLock { state in
            state.credit += bytes
            defer { state.senders = [] }
            return state.senders
        }
        // Woken senders try again, in turn.
        for sender in senders { sender.resume(returning: nil) }
        wakeRoomWaiter()
    }

    /// The service answered the opening.
    func answered(_ answer: Answer) {
        state.withLock { state in
            state.answer = answer
            defer { state.opener = nil }
            return state.opener
        }?.resume(returning: answer)
    }

    /// The other end finished its side (or the lane ended: `lost`).
    func peerEnded(lost: Bool = false) {
        let reader = state.withLock { state in
            state.peerFinished = true
            if lost { state.finished = true }
            defer { state.reader = nil }
            return state.queue.isEmpty ? state.reader : nil
        }
        reader?.resume(returning: nil)
        flush()
        if lost {
            state.withLock { $0.onShutdown = nil }
            answered(.lost)
            releaseSenders()
            wakeRoomWaiter()
        } else {
            leaveIfDone()
        }
    }

    private func releaseSenders() {
        state.withLock { state in
            defer { state.senders = [] }
            return state.senders
        }.forEach { $0.resume(returning: false) }
    }

    private func leaveIfDone() {
        let done = state.withLock { state in
            guard state.finished && state.peerFinished else { return false }
            state.onShutdown = nil
            return true
        }
        if done { lane.remove(id) }
    }
}
