import NIOCore
import Synchronization

/// The frames one end of a lane's socket receives. A close is returned once, and ends the
/// frames. Used by one task at a time.
package final class SocketInbound {
    private let socket: LaneSocket
    private let maximumPayload: Int
    /// The close the other end sent, once it has.
    package private(set) var closeReceived: SocketFrame?

    init(_ socket: LaneSocket, maximumPayload: Int) {
        self.socket = socket
        self.maximumPayload = maximumPayload
    }

    /// The next data or close frame; nil after the close, or when the other end ended its side
    /// without one (the connection was lost). A frame over the route's limit throws
    /// ``SocketStreamError/frameTooLarge``.
    package func next() async throws -> SocketFrame? {
        guard closeReceived == nil, let frame = await socket.next() else { return nil }
        guard frame.payload.readableBytes <= maximumPayload else { throw SocketStreamError.frameTooLarge }
        if frame.kind == .close { closeReceived = frame }
        return frame
    }

    /// Reads and drops what is left, until the other end ends its side.
    func drain() async {
        while await socket.next() != nil {}
    }
}

/// The sending side of one end of a lane's socket: a sender waits while the socket's window is
/// full. Usable from any task.
package final class SocketOutbound: Sendable {
    private let socket: LaneSocket
    private let closed = Atomic<Bool>(false)

    init(_ socket: LaneSocket) {
        self.socket = socket
    }

    /// Sends a data frame; false when it was dropped, as frames sent after the close are.
    @discardableResult
    package func send(_ frame: SocketFrame) async -> Bool {
        guard !closed.load(ordering: .relaxed) else { return false }
        return await socket.send(frame)
    }

    /// Sends the close (once; later closes are dropped). Data sent after it is dropped.
    package func close(code: UInt16, reason: String = "") async {
        guard !closed.exchange(true, ordering: .relaxed) else { return }
        _ = await socket.send(.close(code: code, reason: reason))
    }

    /// Whether this end has sent its close.
    package var hasClosed: Bool { closed.load(ordering: .relaxed) }

    /// Ends this end's side of the socket.
    package func finish() {
        socket.finish()
    }
}

/// When something last arrived from a client, for protocols that keep their own heartbeat.
package final class SocketLiveness: Sendable {
    /// Liveness starting now.
    package init() {}

    private let lastReceived = Atomic<Int64>(SocketLiveness.now)

    /// Records that something arrived.
    package func received() { lastReceived.store(Self.now, ordering: .relaxed) }

    /// How long nothing has arrived.
    package var sinceReceived: Duration { .nanoseconds(Self.now - lastReceived.load(ordering: .relaxed)) }

    private static var now: Int64 { Int64(truncatingIfNeeded: NIODeadline.now().uptimeNanoseconds) }
}
