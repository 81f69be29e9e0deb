import DequeModule
import NIOCore

/// The service's answer to a socket's opening.
enum SocketAnswer: Sendable {
    case accepted
    case refused(status: Int, body: ByteBuffer)
    /// The lane ended, or the wait was cancelled.
    case lost
}

/// Takes each frame the other end of a socket sends, as it arrives, and nil once the other end
/// has finished (or the lane ended); the frame's credit returns when the sink calls `done`.
typealias SocketSink = @Sendable (SocketFrame?, _ done: @escaping @Sendable () -> Void) -> Void

/// One end of a lane's socket, as a value: the frames the other end sent, queued until read or
/// pushed to a sink, the credit to send more (one ``CreditWindow`` each way), the opening's
/// answer, and whether each end has finished. Every event returns what the handler
/// (``LaneSocket``) must do: waiters to wake, credit to give back, a sink to feed. `Reader`,
/// `Sender` and `Opener` are whatever the reading, sending and opening tasks park on.
struct SocketState<Reader: Sendable, Sender: Sendable, Opener: Sendable>: Sendable {
    typealias Answer = SocketAnswer
    typealias Sink = SocketSink

    /// What became of a frame from the other end.
    enum Arrival {
        /// Handed to the parked reader.
        case read(Reader)
        /// Queued (for a reader to come, or for the sink: flush).
        case queued
        /// Dropped (this end reads no more, or the other end had finished): credit it back.
        case dropped
    }

    /// What a reader found.
    enum Read {
        case frame(SocketFrame)
        /// The other end finished and everything it sent was read.
        case end
        /// Nothing yet: the reader is parked.
        case parked
    }

    /// What the sink is handed in one go.
    struct Delivery {
        let sink: Sink
        let frames: [SocketFrame]
        /// Whether the other end's finish follows the frames.
        let end: Bool
    }

    /// What ending this end's side, or losing the lane, leaves to do.
    struct Ending {
        var senders: [Sender] = []
        var roomWaiter: (@Sendable () -> Void)?
        var reader: Reader?
        var opener: Opener?
        /// Whether the socket leaves the lane now (both ends finished).
        var leaves = false
    }

    private var queue = Deque<SocketFrame>()
    private var reader: Reader?
    private var account = CreditAccount(batch: CreditWindow.size / 2)
    private var window = CreditWindow()
    private var senders: [Sender] = []
    private(set) var answer: Answer?
    private var opener: Opener?
    /// The other end sent its finish (or the lane ended).
    private(set) var peerFinished = false
    /// This end sent its finish.
    private(set) var finished = false
    /// This end reads no more: what arrives is dropped and credited at once.
    private var abandoned = false
    private var sink: Sink?
    /// A caller is handing queued frames to the sink.
    private var flushing = false
    /// The sink has been told that the other end finished.
    private var endDelivered = false
    /// What closes the socket when the process shuts down, for sockets no task serves.
    private(set) var onShutdown: (@Sendable () -> Void)?
    /// Who waits, without a task, for credit (see ``LaneSocket/trySend(_:)``).
    private var roomWaiter: (@Sendable () -> Void)?

    /// What a frame costs against the window.
    static func cost(_ frame: SocketFrame) -> Int { frame.payload.readableBytes + 16 }

    // MARK: Reading

    /// The next frame, the end, or nothing yet (`reader` is parked; `cancelled` readers are not).
    mutating func read(parking reader: Reader, cancelled: Bool) -> Read {
        if let frame = queue.popFirst() { return .frame(frame) }
        if peerFinished || cancelled { return .end }
        self.reader = reader
        return .parked
    }

    /// Takes the parked reader (its task was cancelled).
    mutating func takeReader() -> Reader? {
        defer { reader = nil }
        return reader
    }

    /// `cost` bytes of frames were read: the credit to give back now, if any. None goes back
    /// after the other end has finished (it sends nothing more).
    mutating func consumed(_ cost: Int) -> Int? {
        let credit = account.consumed(cost)
        return peerFinished ? nil : credit
    }

    // MARK: Pushing

    /// Pushes frames to `sink` from now on instead of keeping them for a reader.
    mutating func push(to sink: @escaping Sink) { self.sink = sink }

    /// What the sink is to be handed now, unless another caller is handing it over (that one
    /// takes what arrived meanwhile too), there is no sink, or nothing is new.
    mutating func beginDelivery() -> Delivery? {
        guard let sink, !flushing else { return nil }
        let frames = Array(queue)
        queue = []
        let end = peerFinished && !endDelivered
        if end { endDelivered = true }
        guard !frames.isEmpty || end else { return nil }
        flushing = true
        return Delivery(sink: sink, frames: frames, end: end)
    }

    /// A delivery was handed over.
    mutating func endDelivery(_ delivery: Delivery) {
        flushing = false
        // Nothing follows the end: the sink, and what it holds, can go.
        if delivery.end { sink = nil }
    }

    /// Runs `handler` when the process shuts down.
    mutating func setOnShutdown(_ handler: @escaping @Sendable () -> Void) { onShutdown = handler }

    /// The shutdown handler, once.
    mutating func takeOnShutdown() -> (@Sendable () -> Void)? {
        defer { onShutdown = nil }
        return onShutdown
    }

    // MARK: Sending

    /// Takes `cost` from the window for a sender: true when taken, false when nothing more may
    /// be sent (this end finished, or the sender was cancelled), nil when `sender` was parked.
    mutating func reserve(_ cost: Int, parking sender: Sender, cancelled: Bool) -> Bool? {
        if finished || cancelled { return false }
        if window.take(cost) { return true }
        senders.append(sender)
        return nil
    }

    /// Takes `cost` from the window without waiting: true when taken, false when there is no
    /// room, nil when nothing more may be sent.
    mutating func trySend(_ cost: Int) -> Bool? {
        if finished { return nil }
        return window.take(cost)
    }

    /// Keeps `waiter` for when credit next arrives: false when nothing more may be sent (call
    /// it now).
    mutating func whenRoom(_ waiter: @escaping @Sendable () -> Void) -> Bool {
        if finished { return false }
        roomWaiter = waiter
        return true
    }

    /// The other end may send `bytes` more: the senders to wake (each tries again) and the
    /// room waiter.
    mutating func credited(_ bytes: Int) -> Ending {
        window.credit(bytes)
        return takeWaiters()
    }

    /// Takes every parked sender (their tasks were cancelled: none may send).
    mutating func takeSenders() -> [Sender] {
        defer { senders = [] }
        return senders
    }

    /// Takes every parked sender and the room waiter.
    mutating func takeWaiters() -> Ending {
        defer { (senders, roomWaiter) = ([], nil) }
        return Ending(senders: senders, roomWaiter: roomWaiter)
    }

    /// Ends this end's side: nil when it had ended; otherwise the senders to release, the room
    /// waiter to call, and whether the socket leaves the lane.
    mutating func finish() -> Ending? {
        guard !finished else { return nil }
        finished = true
        var ending = takeWaiters()
        ending.leaves = leaves()
        return ending
    }

    /// Stops reading: what is queued, and what still arrives, is dropped.
    mutating func abandon() {
        abandoned = true
        queue = []
    }

    // MARK: Opening

    /// The opening's answer, or nil when `opener` was parked (or `.lost` when cancelled).
    mutating func answer(parking opener: Opener, cancelled: Bool) -> Answer? {
        if let answer { return answer }
        if cancelled { return .lost }
        self.opener = opener
        return nil
    }

    /// Takes the parked opener (its task was cancelled).
    mutating func takeOpener() -> Opener? {
        defer { opener = nil }
        return opener
    }

    /// The service answered the opening: the opener to wake with it.
    mutating func answered(_ answer: Answer) -> Opener? {
        self.answer = answer
        return takeOpener()
    }

    // MARK: From the lane's reader

    /// The other end sent `frame`.
    mutating func received(_ frame: SocketFrame) -> Arrival {
        if abandoned || peerFinished { return .dropped }
        if let reader {
            self.reader = nil
            return .read(reader)
        }
        queue.append(frame)
        return .queued
    }

    /// The other end finished its side, or the lane ended (`lost`: this end is finished too,
    /// and its opening, senders and shutdown handler are let go).
    mutating func peerEnded(lost: Bool) -> Ending {
        peerFinished = true
        var ending = Ending()
        if queue.isEmpty { ending.reader = reader }
        reader = nil
        if lost {
            finished = true
            onShutdown = nil
            ending.opener = answered(.lost)
            let waiters = takeWaiters()
            (ending.senders, ending.roomWaiter) = (waiters.senders, waiters.roomWaiter)
        } else {
            ending.leaves = leaves()
        }
        return ending
    }

    /// Whether both ends have finished; the shutdown handler is let go then.
    private mutating func leaves() -> Bool {
        guard finished && peerFinished else { return false }
        onShutdown = nil
        return true
    }
}
