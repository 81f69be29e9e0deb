import DequeModule
import NIOCore

/// How a call ended without a whole answer.
enum CallFailure: Error, Equatable, Sendable {
    /// The lane ended before the answer did (the callee may or may not have acted).
    case lost
    /// The callee failed the answer after its head.
    case failed
    /// The call's deadline passed before its head arrived.
    case deadline
    /// The callee sent more than its credit allows, or a second head.
    case overrun
}

/// The caller's state of one call's answer, as a value: what the lane's reader handed over
/// (head, parts, end, failure), what the one taker has taken, and the credit owed back. Every
/// event returns what its handler must do (a waiter to wake, credit to send); the handler
/// (``PendingCall``) keeps it under a lock and does the I/O. `Waiter` is whatever the taker
/// parks on.
struct AnswerInbox<Waiter: Sendable>: Sendable {
    /// What taking the next part found.
    enum Take: Equatable {
        /// A part, and the credit to give back for the part taken before it.
        case part(ByteBuffer, credit: Int)
        /// The answer's end, and the credit owed for the last part.
        case end(credit: Int)
        case failed(CallFailure)
        /// Nothing yet: park and try again when woken.
        case wait
    }

    private(set) var head: AnswerHead?
    private var parts = Deque<ByteBuffer>()
    /// Whether the last part has arrived.
    private(set) var isWhole = false
    private(set) var failure: CallFailure?
    private var waiter: Waiter?
    private var waitingForHead = false
    /// Whether any part has been taken (the body can no longer be had whole).
    private var anyTaken = false
    /// The part taken last, credited back once the next is asked for (its taker has written it on).
    private var takenLast = 0
    private var account = CreditAccount(batch: 1)

    // MARK: From the lane's reader

    /// The answer's head arrived with its first part: the waiter to wake, if any.
    mutating func answered(_ head: AnswerHead, part: ByteBuffer, fin: Bool) -> Waiter? {
        guard self.head == nil else { return failing(.overrun) }
        self.head = head
        return append(part, fin: fin)
    }

    /// Another part arrived: the waiter to wake, if any.
    mutating func received(_ part: ByteBuffer, fin: Bool) -> Waiter? {
        guard head != nil else { return failing(.overrun) }
        return append(part, fin: fin)
    }

    /// The call ended without (the rest of) its answer: the waiter to wake, if any. The first
    /// failure stays, an answer already whole is kept, and a deadline only stops a call still
    /// waiting for its head.
    mutating func fail(_ failure: CallFailure) -> Waiter? {
        guard !isWhole, failure != .deadline || head == nil else { return nil }
        return failing(failure)
    }

    private mutating func append(_ part: ByteBuffer, fin: Bool) -> Waiter? {
        guard account.arrived(part.readableBytes) else { return failing(.overrun) }
        if part.readableBytes > 0 { parts.append(part) }
        isWhole = fin
        return wakeIfReady()
    }

    private mutating func failing(_ failure: CallFailure) -> Waiter? {
        self.failure = self.failure ?? failure
        return wakeIfReady()
    }

    private var isReady: Bool { failure != nil || !parts.isEmpty || isWhole || (head != nil && waitingForHead) }

    private mutating func wakeIfReady() -> Waiter? {
        guard isReady else { return nil }
        defer { waiter = nil }
        return waiter
    }

    // MARK: From the taker

    /// The head, or the failure that came first; nil: park (``park(_:)``) and ask again.
    mutating func takeHead() -> Result<AnswerHead, CallFailure>? {
        if let head { return .success(head) }
        if let failure { return .failure(failure) }
        waitingForHead = true
        return nil
    }

    /// The next part, the end, the failure, or nothing yet.
    mutating func takePart() -> Take {
        waitingForHead = false
        if let failure { return .failed(failure) }
        if let part = parts.popFirst() {
            anyTaken = true
            return .part(part, credit: owed(replacedBy: part.readableBytes))
        }
        if isWhole { return .end(credit: owed(replacedBy: 0)) }
        return .wait
    }

    /// Credit for the part taken before, which its taker has written on by now.
    private mutating func owed(replacedBy bytes: Int) -> Int {
        defer { takenLast = bytes }
        return account.consumed(takenLast) ?? 0
    }

    /// The whole body when the answer has ended and none of it was taken; nil otherwise.
    mutating func takeWholeBody() -> ByteBuffer? {
        guard isWhole, failure == nil, !anyTaken else { return nil }
        anyTaken = true
        defer { parts = [] }
        guard parts.count > 1 else { return parts.first ?? ByteBuffer() }
        var body = ByteBuffer()
        body.reserveCapacity(parts.reduce(0) { $0 + $1.readableBytes })
        for part in parts { body.writeImmutableBuffer(part) }
        return body
    }

    /// Parks the taker until the reader has news: false when there is news already (the
    /// taker goes on at once, and is not kept).
    mutating func park(_ waiter: Waiter) -> Bool {
        guard !isReady else { return false }
        self.waiter = waiter
        return true
    }
}
