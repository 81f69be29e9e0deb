import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PostgresNIO
import StreamTestSupport
import TestSupport
import Testing

@testable import FilesService

/// Where a test cluster's files-service keeps bytes: the same behaviour tests run on both, and
/// on local disk with the gateway sending downloads from the store itself (`direct`).
enum StorageBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case local, s3, direct
    var testDescription: String { rawValue }

    /// The two stores, for tests of writes and refusals (which `direct` serves as `local`).
    static let stores: [StorageBackend] = [.local, .s3]
}

/// A cluster whose files-service stores under a fresh directory or a fresh bucket of the test
/// S3 server (`BAAS_TEST_S3_ENDPOINT`, moto's, started by `Deploy/test.sh`), with readable URLs.
struct FileCluster: Sendable {
    let cluster: TestCluster
    /// files-service's storage root (local disk).
    let root: String
    /// The test bucket (S3).
    let bucket: S3Storage?
    /// Where the public URLs in answers start.
    static let publicURL = "https://files.example.test"

    /// `base + prefix`: where public paths start.
    var base: String { cluster.gatewayURL + cluster.prefix() }

    /// The test S3 server's storage in `bucket`.
    static func s3(bucket: String) throws -> S3Storage {
        guard let endpoint = ProcessInfo.processInfo.environment["BAAS_TEST_S3_ENDPOINT"] else {
            throw TestSetupError("BAAS_TEST_S3_ENDPOINT is not set: run the tests with Deploy/test.sh")
        }
        return S3Storage(
            configuration: .init(
                endpoint: endpoint, bucket: bucket, region: "us-east-1", accessKeyID: "test", secretAccessKey: "test"))
    }

    static func with(
        _ backend: StorageBackend = .local, environment extra: [String: String] = [:],
        _ body: @Sendable (FileCluster) async throws -> Void
    ) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("files-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        var environment = [
            "BAAS_FILES_ROOT": root, "BAAS_FILES_PUBLIC_URL": publicURL, "BAAS_FILES_DELETE_GRACE_SECONDS": "0",
            "BAAS_FILES_GARBAGE_INTERVAL_SECONDS": "3600",
        ]
        environment.merge(extra) { $1 }
        var bucket: S3Storage?
        if backend == .direct { environment["BAAS_GATEWAY_FILES_ROOT"] = root }
        if backend == .s3 {
            let name = "test-" + UUID().uuidString.lowercased()
            let storage = try s3(bucket: name)
            try await storage.createBucket()
            bucket = storage
            environment.merge([
                "BAAS_FILES_STORAGE": "s3", "BAAS_FILES_S3_ENDPOINT": storage.configuration.endpoint,
                "BAAS_FILES_S3_BUCKET": name, "BAAS_FILES_S3_ACCESS_KEY_ID": "test",
                "BAAS_FILES_S3_SECRET_ACCESS_KEY": "test",
            ]) { $1 }
        }
        try await TestCluster.with(environment: environment) { [bucket] cluster async throws in
            try await body(FileCluster(cluster: cluster, root: root, bucket: bucket))
        }
    }

    /// Every stored object: files under the local root (relative to it), or the bucket's keys.
    func storedFiles() async throws -> [String] {
        if let bucket { return try await bucket.keys().sorted() }
        return Self.files(under: root)
    }

    /// Rows naming an object already handed to the garbage collector (must be none).
    func danglingRows() async throws -> Int {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
            let rows = try await client.query(
                "SELECT count(*) FROM files.entries e JOIN files.garbage g ON g.storage_key = e.storage_key",
                logger: TestDatabase.logger)
            for try await count in rows.decode(Int.self) { return count }
            return -1
        }
    }

    /// Multipart uploads left open in the bucket (none on local disk).
    func pendingUploads() async throws -> [String] {
        try await bucket?.pendingUploads() ?? []
    }

    /// Every regular file under `root`, relative to it, sorted.
    static func files(under root: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var files: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
            if !isDirectory.boolValue { files.append(path) }
        }
        return files.sorted()
    }

    /// Uploads `bytes` as the multipart field `file` to `files/path`.
    func upload(_ path: String, _ bytes: [UInt8], query: String = "", headers: [(String, String)] = [])
        async throws -> HTTPResult
    {
        let form = MultipartForm(file: bytes)
        return try await HTTPTestClient.send(
            .POST, base + "/files/" + path + query, headers: [("Content-Type", form.contentType)] + headers,
            body: Data(form.body))
    }

    /// A request to `files/path` with headers and an optional body.
    func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)] = [], body: Data? = nil)
        async throws -> HTTPResult
    {
        try await HTTPTestClient.send(method, base + "/files/" + path, headers: headers, body: body)
    }
}

/// A `multipart/form-data` body with one `file` field.
struct MultipartForm {
    static let boundary = "X-BAAS-TEST-BOUNDARY-7f3a"
    var contentType: String { "multipart/form-data; boundary=\(Self.boundary)" }
    let head: [UInt8]
    let tail: [UInt8]
    let file: [UInt8]

    init(file: [UInt8], name: String = "upload.bin") {
        self.file = file
        head = Array(
            ("--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n"
                + "Content-Type: application/octet-stream\r\n\r\n").utf8)
        tail = Array("\r\n--\(Self.boundary)--\r\n".utf8)
    }

    var body: [UInt8] { head + file + tail }
}

/// A multipart body whose file is `size` bytes of ``BytePattern``, streamed; with `failAfter`
/// the stream fails once that many file bytes are out (a client giving up halfway).
struct StreamedForm: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let size: Int
    var failAfter: Int?

    static var head: [UInt8] { MultipartForm(file: []).head }
    static var tail: [UInt8] { MultipartForm(file: []).tail }
    var length: Int { Self.head.count + size + Self.tail.count }

    struct AsyncIterator: AsyncIteratorProtocol {
        var stage = 0
        var pattern: BytePattern.AsyncIterator

        mutating func next() async throws -> ByteBuffer? {
            switch stage {
            case 0:
                stage = 1
                return ByteBuffer(bytes: StreamedForm.head)
            case 1:
                if let chunk = try await pattern.next() { return chunk }
                stage = 2
                return ByteBuffer(bytes: StreamedForm.tail)
            default:
                return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pattern: BytePattern(range: 0..<size, failAfter: failAfter).makeAsyncIterator())
    }
}

/// The test environment lacks something the tests need.
struct TestSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
