/// How either end of a lane keeps it alive: a heartbeat whenever this end has sent nothing for
/// ``SocketLaneTiming/heartbeatInterval``, and the lane given up once nothing has arrived for
/// ``SocketLaneTiming/idleLimit``.
enum LaneKeepAlive {
    /// Runs until `isClosed` says the lane has ended (or the task is cancelled); throws
    /// ``SocketStreamError/idle`` when the other end has gone silent.
    static func run<Frame>(
        heard: SocketLiveness, writer: LaneWriter<Frame>, heartbeat: Frame, isClosed: () -> Bool
    ) async throws {
        while !isClosed() {
            try await Task.sleep(for: SocketLaneTiming.heartbeatInterval)
            if heard.sinceReceived > SocketLaneTiming.idleLimit { throw SocketStreamError.idle }
            if writer.sinceSent >= SocketLaneTiming.heartbeatInterval { writer.enqueue(heartbeat) }
        }
    }
}
