import Crypto
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import PostgresSupport
import ServiceRuntime
import Synchronization

/// A backend that exists only for tests and the benchmark, run in files-service's place:
/// streamed and socket routes declared in its manifest, which the gateway learns and routes with
/// no change of its own. `stream-test-service` runs it as a process of its own.
package enum StreamTestService: BackendService {
    package static let name = ServiceName.files
    package static let migrations: [any DatabaseMigration] = []
    package static let uploadLimit = 2 << 30
    package static let smallLimit = 1 << 20
    /// The socket routes' largest frame.
    package static let socketFrameLimit = 1 << 16
    package static let transfers = TransferLog()
    package static let produced = ProductionCounter()

    package static func register(
        operations: inout OperationRegistry, routes: inout PublicRoutes, environment: ServiceEnvironment
    ) throws {
        let streamed = RouteOptions.streamed(limit: uploadLimit, idleTimeout: .seconds(60))
        routes.stream(.put, "files/hash/:id", options: streamed, doc: .test("Hashes an upload"), hashUpload)
        routes.stream(
            .put, "files/small", options: .streamed(limit: smallLimit, idleTimeout: .seconds(60)),
            doc: .test("Takes a small upload")
        ) {
            request, _ in
            var count = 0
            for try await chunk in request.limitedBody(limit: smallLimit) { count += chunk.readableBytes }
            return try .json(["bytes": count])
        }
        routes.stream(.get, "files/blob/:size", options: streamed, doc: .test("Streams a blob"), download)
        routes.socket("files/echo", options: .socket(maximumFrame: socketFrameLimit), doc: .test("Echoes frames"), echo)
        registerLaneRoutes(&routes)
        routes.stream(.get, "files/broken", options: streamed, doc: .test("Fails midway")) { _, _ in
            Response(
                status: .ok, headers: [.contentLength: "\(1 << 20)"],
                body: ResponseBody(contentLength: 1 << 20) { writer in
                    try await writer.write(BytePattern.bytes(0..<(64 << 10)))
                    throw ErrorEnvelope.internalError
                })
        }
    }

    /// Buffered routes, which the gateway passes as calls on a lane: `files/lane/blob/:size`
    /// answers `size` pattern bytes (a transfer `id` in the query is logged completed or
    /// aborted), `files/lane/slow?id=` never answers (logged aborted once cancelled), and
    /// `files/lane/broken` fails after its first 128 KiB.
    static func registerLaneRoutes(_ routes: inout PublicRoutes) {
        routes.stream(.get, "files/lane/blob/:size", options: .json, doc: .test("Answers a blob on a lane")) {
            request, context in
            let size = try context.parameters.require("size", as: Int.self)
            let id = request.uri.queryParameters["id"].map(String.init)
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: ResponseBody(contentLength: size) { writer in
                    try await logged(id) {
                        for try await chunk in CountedChunks(base: BytePattern(range: 0..<size), id: id) {
                            try await writer.write(chunk)
                        }
                        try await writer.finish(nil)
                    }
                })
        }
        routes.stream(.get, "files/lane/slow", options: .json, doc: .test("Answers late")) { request, _ in
            try await logged(request.uri.queryParameters["id"].map(String.init)) {
                try await Task.sleep(for: .seconds(3_600))
            }
            return Response(status: .noContent)
        }
        routes.stream(.get, "files/lane/broken", options: .json, doc: .test("Fails midway on a lane")) { _, _ in
            Response(
                status: .ok, headers: [.contentLength: "\(1 << 20)"],
                body: ResponseBody(contentLength: 1 << 20) { writer in
                    try await writer.write(BytePattern.bytes(0..<(128 << 10)))
                    try await writer.write(BytePattern.bytes(0..<1))
                    throw ErrorEnvelope.internalError
                })
        }
    }

    /// Runs `work`, logging under `id` whether it completed or was aborted.
    private static func logged(_ id: String?, _ work: () async throws -> Void) async throws {
        do {
            try await work()
            if let id { await transfers.record(id, .completed) }
        } catch {
            if let id { await transfers.record(id, .aborted) }
            throw error
        }
    }

    /// Echoes every frame; `close:N` closes the socket with code N. The client's close code is
    /// recorded under the request id; with a `counter` query parameter, the frames echoed so far
    /// are counted under its value.
    @Sendable static func echo(
        _ inbound: SocketInbound, _ outbound: SocketOutbound, _ context: PublicRequestContext, _ query: [String: String]
    ) async throws {
        let id = context.call.requestID
        while let frame = try await inbound.next() {
            if frame.kind == .close {
                await closes.record(frame.closeCode, for: id)
                return
            }
            if let text = frame.text, text.hasPrefix("close:"), let code = UInt16(text.dropFirst(6)) {
                await outbound.close(code: code, reason: "asked")
                continue
            }
            await outbound.send(frame)
            if let counter = query["counter"] { await echoed.add(counter) }
        }
    }

    package static let closes = CloseLog()
    package static let echoed = EchoCounts()

    /// Hashes the body as it arrives and records whether the handler saw it through.
    @Sendable static func hashUpload(_ request: Request, _ context: PublicRequestContext) async throws -> Response {
        let id = context.decodedParameter("id") ?? ""
        var hash = SHA256()
        var count = 0
        do {
            for try await chunk in request.limitedBody(limit: uploadLimit) {
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                count += chunk.readableBytes
            }
        } catch {
            await transfers.record(id, .aborted)
            throw error
        }
        await transfers.record(id, .completed)
        return try .json(["sha256": BytePattern.hex(hash.finalize()), "bytes": "\(count)"])
    }

    /// `size` bytes of the pattern with an ETag, honouring `If-None-Match` and one `Range`.
    @Sendable static func download(_ request: Request, _ context: PublicRequestContext) async throws -> Response {
        guard let size = context.decodedParameter("size").flatMap(Int.init) else {
            throw ErrorEnvelope.badRequest("size")
        }
        let etag = "\"blob-\(size)\""
        if request.headers[.ifNoneMatch] == etag { return Response(status: .notModified, headers: [.eTag: etag]) }
        var range = 0..<size
        var status = HTTPResponse.Status.ok
        var headers: HTTPFields = [.eTag: etag, .acceptRanges: "bytes", .contentType: "application/octet-stream"]
        if let asked = request.headers[.range].flatMap({ byteRange($0, size: size) }) {
            range = asked
            status = .partialContent
            headers[.contentRange] = "bytes \(asked.lowerBound)-\(asked.upperBound - 1)/\(size)"
        }
        headers[.contentLength] = "\(range.count)"
        let counted = CountedChunks(
            base: BytePattern(range: range), id: request.uri.queryParameters["id"].map(String.init))
        return Response(
            status: status, headers: headers,
            body: .paced(counted, contentLength: range.count, eventLoop: context.eventLoop))
    }

    /// `bytes=a-b` within `size`.
    static func byteRange(_ header: String, size: Int) -> Range<Int>? {
        guard header.hasPrefix("bytes=") else { return nil }
        let bounds = header.dropFirst(6).split(separator: "-").compactMap { Int($0) }
        guard bounds.count == 2, bounds[0] <= bounds[1], bounds[1] < size else { return nil }
        return bounds[0]..<(bounds[1] + 1)
    }
}

/// Chunks that count, per transfer id, how many bytes the service has produced.
struct CountedChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: BytePattern
    let id: String?

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: BytePattern.AsyncIterator
        let id: String?

        mutating func next() async throws -> ByteBuffer? {
            let chunk = try await base.next()
            if let id, let chunk { StreamTestService.produced.add(chunk.readableBytes, to: id) }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), id: id) }
}

/// Bytes produced per transfer id.
package final class ProductionCounter: Sendable {
    private let counts = Mutex<[String: Int]>([:])
    func add(_ bytes: Int, to id: String) { counts.withLock { $0[id, default: 0] += bytes } }
    /// Bytes produced for `id`.
    package func bytes(_ id: String) -> Int { counts.withLock { $0[id, default: 0] } }
}

/// How each upload's handler ended.
package actor TransferLog {
    /// How a handler ended.
    package enum Outcome: Sendable { case completed, aborted }
    private var outcomes: [String: Outcome] = [:]

    func record(_ id: String, _ outcome: Outcome) { outcomes[id] = outcome }
    /// How the upload `id` ended, once it has.
    package func outcome(_ id: String) -> Outcome? { outcomes[id] }
}

/// The close codes sockets received from their clients, by request id.
package actor CloseLog {
    private var codes: [String: UInt16] = [:]

    func record(_ code: UInt16, for id: String) { codes[id] = code }

    /// Every code received so far.
    package var all: [UInt16] { Array(codes.values) }
}

/// Frames the echo route has sent, by the `counter` its clients named.
package actor EchoCounts {
    private var counts: [String: Int] = [:]

    func add(_ counter: String) { counts[counter, default: 0] += 1 }

    /// The frames echoed under `counter` so far.
    package func count(_ counter: String) -> Int { counts[counter, default: 0] }
}

extension RouteDoc {
    /// A test route's description: bytes out.
    static func test(_ summary: String) -> RouteDoc { RouteDoc(summary, answer: .bytes) }
}
