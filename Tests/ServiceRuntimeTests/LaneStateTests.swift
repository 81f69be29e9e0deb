import HTTPTypes
import NIOCore
import TestSupport
import Testing

@testable import ServiceRuntime

/// The lane protocol's state machines, driven by events alone: no task, no lock, no I/O.
/// (Results are gathered before they are checked: `#expect` cannot call a mutating method.)
@Suite(.tags(.fast)) struct LaneStateTests {
    // MARK: The credit window

    @Test func theWindowAdmitsUpToItsSizeAndALargerFrameOnlyAlone() {
        let size = CreditWindow.size
        var window = CreditWindow()
        let within = [window.take(size - 10), window.take(11), window.take(10), window.take(1)]
        #expect(within == [true, false, true, false])
        window.credit(size)
        let large = [window.take(size * 3), window.take(1)]
        #expect(large == [true, false], "a frame larger than the window goes when nothing is in flight")
        window.credit(size * 2)
        let stillFull = window.take(1)
        #expect(!stillFull, "a window's worth is still in flight")
        window.credit(.max)
        #expect(window.available == size, "credit beyond the window fills it and no further")
        window.credit(-5)
        #expect(window.available == size)
    }

    @Test func theAccountGivesCreditBackInBatchesAndCatchesAnOverrun() {
        var account = CreditAccount(batch: 100)
        let arrivals = [account.arrived(60), account.arrived(60)]
        let credits = [account.consumed(60), account.consumed(60)]
        #expect(arrivals == [true, true] && credits == [nil, 120] && account.inFlight == 0)
        let alone = [account.arrived(CreditWindow.size * 2), account.arrived(1)]
        #expect(alone == [true, false], "one larger frame goes alone; anything beside it overruns")

        var single = CreditAccount(batch: 1)
        let full = [single.arrived(CreditWindow.size), single.arrived(1)]
        let nothingRead = single.consumed(0)
        #expect(full == [true, false] && nothingRead == nil)
    }

    /// A sender and a receiver keeping the window over 300 random runs, frames and credit in
    /// flight between them: the receiver never sees an overrun, and every frame sent arrives.
    @Test func aSenderKeepingTheWindowNeverOverrunsItsReceiver() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var window = CreditWindow()
            var account = CreditAccount(batch: [1, 4_096, CreditWindow.size / 2].randomElement(using: &random)!)
            var (toReceiver, unread, toSender): ([Int], [Int], [Int]) = ([], [], [])
            var (sent, read, overruns) = (0, 0, 0)
            for _ in 0..<400 {
                switch Int.random(in: 0..<4, using: &random) {
                case 0:
                    let cost = Bool.random(using: &random) ? Int.random(in: 1...70_000) : CreditWindow.size + 7
                    if window.take(cost) {
                        toReceiver.append(cost)
                        sent += 1
                    }
                case 1 where !toReceiver.isEmpty:
                    let cost = toReceiver.removeFirst()
                    if !account.arrived(cost) { overruns += 1 }
                    unread.append(cost)
                case 2 where !unread.isEmpty:
                    read += 1
                    if let credit = account.consumed(unread.removeFirst()) { toSender.append(credit) }
                case 3 where !toSender.isEmpty:
                    window.credit(toSender.removeFirst())
                default: break
                }
            }
            #expect(overruns == 0)
            #expect(sent == read + unread.count + toReceiver.count)
        }
    }

    // MARK: A call's answer, at the caller

    private static func head(_ status: Int = 200) -> AnswerHead { AnswerHead(status: status, headers: [:]) }
    private static func part(_ count: Int, _ byte: UInt8 = 1) -> ByteBuffer {
        ByteBuffer(repeating: byte, count: count)
    }

    @Test func anAnswerIsTakenHeadFirstThenPartsEachCreditedWhenTheNextIsAsked() throws {
        var inbox = AnswerInbox<Int>()
        let before = inbox.takeHead()
        let parked = inbox.park(1)
        let woken = inbox.answered(Self.head(201), part: Self.part(10), fin: false)
        #expect(before == nil && parked && woken == 1, "the parked taker is woken by the head")
        let taken = inbox.takeHead()
        let head = try #require(try taken?.get())
        #expect(head.status == 201)
        let first = [inbox.takePart(), inbox.takePart()]
        #expect(first == [.part(Self.part(10), credit: 0), .wait])
        let parkedAgain = inbox.park(2)
        let wokenAgain = inbox.received(Self.part(20, 2), fin: false)
        let second = inbox.takePart()
        #expect(parkedAgain && wokenAgain == 2 && second == .part(Self.part(20, 2), credit: 10))
        let nobody = inbox.received(ByteBuffer(), fin: true)
        let newsThere = !inbox.park(3)
        let end = inbox.takePart()
        let whole = inbox.takeWholeBody()
        #expect(nobody == nil && newsThere && end == .end(credit: 20) && whole == nil)
    }

    @Test func aWholeAnswerIsTakenInOneBufferOnce() {
        var inbox = AnswerInbox<Int>()
        let early = inbox.takeWholeBody()
        _ = inbox.answered(Self.head(), part: Self.part(3), fin: false)
        _ = inbox.received(Self.part(2, 2), fin: true)
        let bodies = [inbox.takeWholeBody(), inbox.takeWholeBody()]
        #expect(early == nil && inbox.isWhole)
        #expect(bodies == [ByteBuffer(bytes: [1, 1, 1, 2, 2]), nil])
    }

    @Test func aSecondHeadOrAPartBeforeTheHeadIsAnOverrun() {
        var early = AnswerInbox<Int>()
        _ = early.received(Self.part(1), fin: false)
        let head = early.takeHead()
        #expect(early.failure == .overrun)
        #expect(throws: CallFailure.overrun) { try head?.get() }

        var twice = AnswerInbox<Int>()
        _ = twice.answered(Self.head(), part: Self.part(1), fin: false)
        _ = twice.answered(Self.head(), part: Self.part(1), fin: false)
        let taken = twice.takePart()
        #expect(taken == .failed(.overrun))
    }

    @Test func partsBeyondTheWindowWithoutCreditAreAnOverrun() {
        let part = Self.part(CallFrame.largestPart)
        var inbox = AnswerInbox<Int>()
        _ = inbox.answered(Self.head(), part: part, fin: false)
        for _ in 1..<(CreditWindow.size / CallFrame.largestPart) { _ = inbox.received(part, fin: false) }
        #expect(inbox.failure == nil)
        // Three parts taken: the first two are credited back (the third when the next is asked).
        for _ in 0..<3 { _ = inbox.takePart() }
        for _ in 0..<2 { _ = inbox.received(part, fin: false) }
        #expect(inbox.failure == nil)
        _ = inbox.received(part, fin: false)
        #expect(inbox.failure == .overrun)
    }

    @Test func theFirstFailureStaysADeadlineStopsOnlyAWaitForTheHeadAndAWholeAnswerIsKept() {
        var waiting = AnswerInbox<Int>()
        _ = waiting.takeHead()
        _ = waiting.park(7)
        let woken = waiting.fail(.deadline)
        _ = waiting.fail(.lost)
        let taken = waiting.takePart()
        #expect(woken == 7 && taken == .failed(.deadline))

        var headed = AnswerInbox<Int>()
        _ = headed.answered(Self.head(), part: Self.part(1), fin: false)
        _ = headed.fail(.deadline)
        #expect(headed.failure == nil, "the head came before the deadline")
        _ = headed.fail(.failed)
        #expect(headed.failure == .failed)

        var whole = AnswerInbox<Int>()
        _ = whole.answered(Self.head(), part: Self.part(1), fin: true)
        _ = whole.fail(.lost)
        let kept = whole.takePart()
        #expect(whole.failure == nil && kept == .part(Self.part(1), credit: 0))
    }

    // MARK: A served call's credit, at the callee

    @Test func aServedCallSendsWithinItsCreditAndStopsWhenCancelled() {
        var call = ServedCallState<Int, String>()
        let started = call.started("task")
        let first = [call.reserve(CreditWindow.size - 5), call.reserve(10)]
        let parked = call.park(1, for: 10)
        let woken = call.credited(4)
        let tooLittle = call.reserve(10)
        let roomCame = !call.park(2, for: 9)
        let fits = call.reserve(9)
        #expect(started && first == [.taken, .wait] && parked && woken == 1)
        #expect(tooLittle == .wait && roomCame && fits == .taken)
        _ = call.park(3, for: 1)
        let cancelled = call.cancel()
        let after = call.reserve(1)
        let parkedAfter = call.park(4, for: CreditWindow.size + 1)
        #expect(cancelled.work == "task" && cancelled.waiter == 3 && after == .cancelled && !parkedAfter)

        var early = ServedCallState<Int, String>()
        _ = early.cancel()
        let startedLate = early.started("task")
        #expect(!startedLate, "a call cancelled before it started is cancelled at once")
    }

    // MARK: A socket's end

    private typealias Socket = SocketState<Int, Int, Int>

    @Test func aSocketHandsFramesToItsReaderOrQueuesThemAndGivesCreditBackByHalfWindows() {
        var socket = Socket()
        let parked = socket.read(parking: 1, cancelled: false)
        let handed = socket.received(.text("a"))
        let queued = socket.received(.text("b"))
        let read = socket.read(parking: 2, cancelled: false)
        guard case .parked = parked, case .read(1) = handed, case .queued = queued, case .frame(let frame) = read
        else {
            Issue.record("\(parked) \(handed) \(queued) \(read)")
            return
        }
        #expect(frame == .text("b"))
        let credits = [socket.consumed(CreditWindow.size / 2 - 1), socket.consumed(1)]
        #expect(credits == [nil, CreditWindow.size / 2])
        let ending = socket.peerEnded(lost: false)
        #expect(ending.reader == nil && !ending.leaves)
        let end = socket.read(parking: 3, cancelled: false)
        let afterEnd = socket.consumed(CreditWindow.size)
        let late = socket.received(.text("late"))
        guard case .end = end, case .dropped = late else {
            Issue.record("\(end) \(late)")
            return
        }
        #expect(afterEnd == nil, "no credit after the other end finished")
        let finishes = [socket.finish()?.leaves, socket.finish()?.leaves]
        #expect(finishes == [true, nil], "the socket leaves once both ends finished; a second finish does nothing")
    }

    @Test func aSocketsSendersWaitForCreditAndAreReleasedByItsFinish() {
        var socket = Socket()
        let first = [
            socket.reserve(CreditWindow.size, parking: 1, cancelled: false),
            socket.reserve(1, parking: 2, cancelled: false),
        ]
        let tried = socket.trySend(1)
        let waits = socket.whenRoom {}
        #expect(first == [true, nil] && tried == false && waits)
        let woken = socket.credited(10)
        #expect(woken.senders == [2] && woken.roomWaiter != nil)
        let next = [
            socket.trySend(10), socket.reserve(1, parking: 3, cancelled: false),
            socket.reserve(1, parking: 4, cancelled: true),
        ]
        #expect(next == [true, nil, false])
        let finished = socket.finish()
        #expect(finished?.senders == [3] && finished?.leaves == false)
        let afterFinish = [socket.trySend(1), socket.reserve(1, parking: 5, cancelled: false)]
        let waitsAfter = socket.whenRoom {}
        #expect(afterFinish == [nil, false] && !waitsAfter)
    }

    @Test func aLostLaneEndsTheSocketsOpeningSendersAndReader() {
        var socket = Socket()
        let unanswered = socket.answer(parking: 1, cancelled: false)
        _ = socket.read(parking: 2, cancelled: false)
        _ = socket.reserve(CreditWindow.size, parking: 3, cancelled: false)
        _ = socket.reserve(1, parking: 4, cancelled: false)
        socket.setOnShutdown {}
        let ending = socket.peerEnded(lost: true)
        #expect(unanswered == nil && ending.opener == 1 && ending.reader == 2 && ending.senders == [4])
        #expect(socket.finished && socket.onShutdown == nil)
        let answer = socket.answer(parking: 5, cancelled: false)
        guard case .lost? = answer else {
            Issue.record("\(String(describing: answer))")
            return
        }
    }

    @Test func aSocketPushesToItsSinkInOrderOneDeliveryAtATimeAndTheEndOnce() throws {
        var socket = Socket()
        _ = socket.received(.text("queued before the sink"))
        let withoutSink = socket.beginDelivery()
        socket.push { _, _ in }
        let firstDelivery = socket.beginDelivery()
        let first = try #require(firstDelivery)
        _ = socket.received(.text("during"))
        let during = socket.beginDelivery()
        #expect(withoutSink == nil && during == nil, "no delivery without a sink, and one at a time")
        #expect(first.frames == [.text("queued before the sink")] && !first.end)
        socket.endDelivery(first)
        _ = socket.peerEnded(lost: false)
        let secondDelivery = socket.beginDelivery()
        let second = try #require(secondDelivery)
        #expect(second.frames == [.text("during")] && second.end)
        socket.endDelivery(second)
        let afterEnd = socket.beginDelivery()
        #expect(afterEnd == nil, "the end is delivered once")
    }

    @Test func anAbandonedSocketDropsWhatArrives() {
        var socket = Socket()
        _ = socket.received(.text("a"))
        socket.abandon()
        let late = socket.received(.text("b"))
        let read = socket.read(parking: 1, cancelled: false)
        guard case .dropped = late, case .parked = read else {
            Issue.record("\(late) \(read)")
            return
        }
    }
}
