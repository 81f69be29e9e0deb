import AsyncHTTPClient
import Hummingbird
import InternalProtocol
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// Either end of a lane, as the stream carrying it sees it: the bytes this end sends, the
/// reading of the other end's, the heartbeat, and the end of the lane.
protocol LaneEnd: Sendable {
    associatedtype Frame: LaneFrameCoding
    /// What this end sends.
    var writer: LaneWriter<Frame> { get }
    /// Reads the other end's frames until the lane ends.
    func readFrames<Bytes: AsyncSequence>(from bytes: Bytes) async throws where Bytes.Element == ByteBuffer
    /// Keeps the lane alive until it ends.
    func keepAlive() async throws
    /// Closes the lane once nothing is left on it, refusing new work meanwhile.
    func drain()
    /// Ends the lane at once.
    func close()
}

extension LaneEnd {
    /// Cuts the other end's frames out of `bytes` and hands each to `dispatch`, noting in
    /// `heard` that the other end is alive, until the bytes end; then closes the lane.
    func dispatchFrames<Bytes: AsyncSequence>(
        from bytes: Bytes, maximumPayload: Int, heard: SocketLiveness, _ dispatch: (Frame) -> Void
    ) async throws where Bytes.Element == ByteBuffer {
        defer { close() }
        var decoder = LaneFrameDecoder<Frame>(maximumPayload: maximumPayload)
        for try await chunk in bytes {
            heard.received()
            decoder.append(chunk)
            while let frame = try decoder.next() { dispatch(frame) }
        }
    }

    /// Opens the lane's stream as `GET url` on `client` (the caller's end): this end's bytes go
    /// out as the request's body, the other end's arrive as the answer's, until either ends or
    /// the answer is no HTTP/2 200. The lane is closed when the stream ends.
    func open(url: String, client: HTTPClient, logger: Logger) {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: InternalHeader.requestID, value: CallContext.newRequestID())
        request.body = .stream(writer, length: .unknown)
        Task {
            defer { close() }
            do {
                let answer = try await client.execute(request, deadline: .distantFuture, logger: logger)
                guard answer.status == .ok, answer.version == .http2 else {
                    logger.warning("lane refused", metadata: ["url": "\(url)", "status": "\(answer.status.code)"])
                    return
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await readFrames(from: answer.body) }
                    group.addTask { try await keepAlive() }
                    try await group.next()
                    group.cancelAll()
                }
            } catch {
                logger.debug("lane ended", metadata: ["url": "\(url)", "error": "\(error)"])
            }
        }
    }

    /// Serves the lane's stream (the callee's end): reads the request's body with
    /// `readFrames`, keeps the lane alive, and writes this end's bytes to `response` until
    /// the lane ends. A process shutting down drains the lane, and closes it after
    /// ``LaneServing/shutdownLimit`` whatever is left.
    func serve(_ body: RequestBody, to response: inout any ResponseBodyWriter) async {
        await withGracefulShutdownHandler {
            await withTaskGroup(of: LaneServing.Task.self) { group in
                group.addTask {
                    try? await readFrames(from: body)
                    return .reading
                }
                group.addTask {
                    try? await keepAlive()
                    return .keepingAlive
                }
                for await bytes in writer {
                    guard (try? await response.write(bytes)) != nil else { break }
                }
                close()
                // The answer ends only once the caller has ended its request (it does on the
                // lane's close), or after a grace: AsyncHTTPClient does not survive a stream
                // ended under a request body it is still sending.
                group.addTask {
                    try? await Task.sleep(for: LaneServing.closeGrace)
                    return .grace
                }
                while let finished = await group.next(), finished == .keepingAlive {}
                group.cancelAll()
            }
        } onGracefulShutdown: {
            drain()
            Task {
                try? await Task.sleep(for: LaneServing.shutdownLimit)
                close()
            }
        }
    }
}

/// The callee's timing of a lane's end.
enum LaneServing {
    fileprivate enum Task: Sendable {
        case reading, keepingAlive, grace
    }

    /// How long an ended lane waits for the caller to end its side.
    static let closeGrace = Duration.seconds(5)
    /// How long a shutting-down service waits for what is left on its lanes.
    static let shutdownLimit = Duration.seconds(10)
}
