import AsyncAlgorithms
import NIOCore
import Synchronization

/// The frames one end of an internal socket stream receives, read from the stream's bytes as
/// they arrive. Heartbeats only count as life; a close is returned once, and ends the frames.
/// Used by one task at a time.
public final class SocketInbound<Bytes: AsyncSequence> where Bytes.Element == ByteBuffer {
    private var bytes: Bytes.AsyncIterator
    private var decoder: SocketFrameDecoder
    private let liveness: SocketLiveness
    private var bytesEnded = false
    /// The close the other end sent, once it has.
    public private(set) var closeReceived: SocketFrame?

    /// Reads frames of at most `maximumPayload` bytes from `bytes`, recording life on `liveness`.
    public init(_ bytes: Bytes, maximumPayload: Int, liveness: SocketLiveness) {
        self.bytes = bytes.makeAsyncIterator()
        decoder = SocketFrameDecoder(maximumPayload: maximumPayload)
        self.liveness = liveness
    }

    /// The next data or close frame; nil after the close, or when the other end ended the
    /// stream without one (the connection was lost).
    public func next() async throws -> SocketFrame? {
        guard closeReceived == nil else { return nil }
        while true {
            if let frame = try decoder.next() {
                liveness.received()
                if frame.kind == .heartbeat { continue }
                if frame.kind == .close { closeReceived = frame }
                return frame
            }
            guard !bytesEnded, let chunk = try await bytes.next() else {
                bytesEnded = true
                return nil
            }
            liveness.received()
            decoder.append(chunk)
        }
    }

    /// Reads and drops what is left, until the other end ends its side of the stream.
    func drain() async throws {
        guard !bytesEnded else { return }
        while try await bytes.next() != nil { liveness.received() }
        bytesEnded = true
    }
}

/// The sending side of one end of an internal socket stream: frames queue (a few at most; a
/// sender waits for the stream to take them) and become the stream's bytes.
public final class SocketOutbound: Sendable {
    private let channel = AsyncChannel<ByteBuffer>()
    private let closed = Atomic<Bool>(false)
    /// When this end last sent and received.
    public let liveness = SocketLiveness()

    /// An open sender.
    public init() {}

    /// The bytes to put on the stream.
    public var bytes: AsyncChannel<ByteBuffer> { channel }

    /// Sends a data frame; false when it was dropped, as frames sent after the close are.
    @discardableResult
    public func send(_ frame: SocketFrame) async -> Bool {
        guard !closed.load(ordering: .relaxed) else { return false }
        await put(frame)
        return true
    }

    /// Sends the close (once; later closes are dropped). Data sent after it is dropped.
    public func close(code: UInt16, reason: String = "") async {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        await put(.close(code: code, reason: reason))
    }

    /// Whether this end has sent its close.
    public var hasClosed: Bool { closed.load(ordering: .relaxed) }

    /// Ends this end's side of the stream.
    public func finish() {
        channel.finish()
    }

    private func put(_ frame: SocketFrame) async {
        liveness.sent()
        await channel.send(frame.encoded())
    }

    /// Sends a heartbeat whenever this end has sent nothing for `interval`, and ends with
    /// ``SocketStreamError/idle`` once nothing has arrived for `idle`. Runs until cancelled.
    public func keepAlive(interval: Duration, idle: Duration) async throws {
        while true {
            try await Task.sleep(for: interval)
            if liveness.sinceReceived > idle { throw SocketStreamError.idle }
            if liveness.sinceSent >= interval { await put(.heartbeat) }
        }
    }
}

/// When one end of a socket stream last sent and last received anything.
public final class SocketLiveness: Sendable {
    /// Liveness starting now.
    public init() {}

    private let lastSent = Atomic<Int64>(SocketLiveness.now)
    private let lastReceived = Atomic<Int64>(SocketLiveness.now)

    /// Records that something arrived.
    public func received() { lastReceived.store(Self.now, ordering: .relaxed) }
    /// Records that something was sent.
    public func sent() { lastSent.store(Self.now, ordering: .relaxed) }

    /// How long nothing has been sent.
    var sinceSent: Duration { .nanoseconds(Self.now - lastSent.load(ordering: .relaxed)) }
    /// How long nothing has arrived.
    public var sinceReceived: Duration { .nanoseconds(Self.now - lastReceived.load(ordering: .relaxed)) }

    private static var now: Int64 { Int64(truncatingIfNeeded: NIODeadline.now().uptimeNanoseconds) }
}
