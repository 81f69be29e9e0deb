import Configuration
import Foundation
import InternalProtocol
import NIOCore
import PostgresNIO
import PostgresSupport
import ServiceRuntime
import StreamTestSupport
import TestSupport
import Testing

@testable import FilesService

/// Storage and catalog below the routes: objects appear whole or not at all, ranges read
/// exactly, and replaced or removed objects are collected only once their grace has passed.
@Suite(.timeLimit(.minutes(20))) struct FileStorageTests {
    let logger = TestDatabase.logger

    static func withRoot(_ body: (String) async throws -> Void) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("storage-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try await body(root)
    }

    static func files(under root: String) -> [String] { FileCluster.files(under: root) }

    @Test func objectsAppearWholeOrNotAtAll() async throws {
        try await Self.withRoot { root in
            let storage = LocalDiskStorage(root: root)
            let size = 3 << 20
            #expect(try await storage.write(BytePattern(range: 0..<size), app: "APP", key: "ab01") == Int64(size))
            #expect(Self.files(under: root) == ["APP/ab/ab01"])
            var read: [UInt8] = []
            try await storage.read(app: "APP", key: "ab01", range: 1000..<(2 << 20)) { read += $0.readableBytesView }
            #expect(read == Array(BytePattern.bytes(1000..<(2 << 20)).readableBytesView))
            await #expect(throws: (any Error).self) {
                _ = try await storage.write(BytePattern(range: 0..<size, failAfter: size / 2), app: "APP", key: "ab02")
            }
            #expect(Self.files(under: root) == ["APP/ab/ab01"])
            try await storage.delete(app: "APP", key: "ab01")
            try await storage.delete(app: "APP", key: "ab01")
            #expect(Self.files(under: root).isEmpty)
        }
    }

    @Test func replacedAndRemovedObjectsAreCollectedAfterTheirGrace() async throws {
        try await Self.withRoot { root in
            try await TestDatabase.with { database async throws in
                try await PostgresClient.with(database, logger: logger) { client async throws in
                    try await MigrationRunner(owner: "files", migrations: FilesService.migrations).apply(
                        on: client, logger: logger)
                    let storage = LocalDiskStorage(root: root)
                    let path = try FilePath(encoded: "d/f.txt")
                    func put(_ key: String, catalog: FileCatalog) async throws {
                        _ = try await storage.write(SingleBuffer(buffer: ByteBuffer(string: key)), app: "A", key: key)
                        let file = StoredFile(key: key, size: Int64(key.utf8.count), contentType: "text/plain")
                        try await catalog.putFile(app: "A", path: path, file: file, owner: nil, overwrite: true)
                    }
                    let patient = FileCatalog(database: client, logger: logger, deletionGrace: 3_600_000)
                    try await put("aa01", catalog: patient)
                    try await put("aa02", catalog: patient)
                    let collector = GarbageCollector(catalog: patient, storage: storage, interval: .seconds(3600))
                    #expect(try await collector.collect() == 0)
                    #expect(Self.files(under: root).count == 2)

                    let hasty = FileCatalog(database: client, logger: logger, deletionGrace: 0)
                    try await put("aa03", catalog: hasty)
                    let collectNow = GarbageCollector(catalog: hasty, storage: storage, interval: .seconds(3600))
                    #expect(try await collectNow.collect() == 1)
                    #expect(Self.files(under: root) == ["A/aa/aa01", "A/aa/aa03"])
                    try await hasty.remove(app: "A", path: try FilePath(encoded: "d"))
                    #expect(try await collectNow.collect() == 1)
                    #expect(Self.files(under: root) == ["A/aa/aa01"])
                    #expect(try await hasty.entry(app: "A", path: path) == nil)
                }
            }
        }
    }

    /// Local storage whose deletes of `failing` keys fail (a storage that refuses for a while).
    struct RefusingDeletes: FileStorage {
        let base: LocalDiskStorage
        let failing: Set<String>

        func write<Body: AsyncSequence>(_ body: Body, app: String, key: String) async throws -> Int64
        where Body.Element == ByteBuffer { try await base.write(body, app: app, key: key) }
        func compose(app: String, sources: [String], key: String) async throws -> Int64 {
            try await base.compose(app: app, sources: sources, key: key)
        }
        func read(app: String, key: String, range: Range<Int64>, into consume: (ByteBuffer) async throws -> Void)
            async throws
        {
            try await base.read(app: app, key: key, range: range, into: consume)
        }
        func delete(app: String, key: String) async throws {
            if failing.contains(key) { throw CancellationError() }
            try await base.delete(app: app, key: key)
        }
    }

    @Test func anObjectThatCannotBeRemovedWaitsBehindTheOthers() async throws {
        try await Self.withRoot { root in
            try await TestDatabase.with { database async throws in
                try await PostgresClient.with(database, logger: logger) { client async throws in
                    try await MigrationRunner(owner: "files", migrations: FilesService.migrations).apply(
                        on: client, logger: logger)
                    let catalog = FileCatalog(database: client, logger: logger, deletionGrace: 0)
                    let local = LocalDiskStorage(root: root)
                    for key in ["bb01", "bb02"] {
                        _ = try await local.write(SingleBuffer(buffer: ByteBuffer(string: key)), app: "A", key: key)
                    }
                    try await catalog.transaction { try await catalog.discard(["bb01", "bb02"], app: "A", on: $0) }
                    let collector = GarbageCollector(
                        catalog: catalog, storage: RefusingDeletes(base: local, failing: ["bb01"]),
                        interval: .seconds(3600))
                    #expect(try await collector.collect() == 1)
                    #expect(Self.files(under: root) == ["A/bb/bb01"])
                    // Requeued an hour later: not due now, so the next pass finds nothing to do.
                    #expect(try await collector.collect() == 0)
                    let rows = try await client.query("SELECT storage_key FROM files.garbage", logger: logger)
                    var keys: [String] = []
                    for try await key in rows.decode(String.self) { keys.append(key) }
                    #expect(keys == ["bb01"])
                }
            }
        }
    }

    @Test func storageSettingsAreCheckedAtStart() throws {
        func storage(_ environment: [String: String]) throws -> any FileStorage {
            try FilesService.storage(ConfigReader.fromEnvironment(environment).scoped(to: "baas").scoped(to: "files"))
        }
        #expect(try storage([:]) is LocalDiskStorage)
        #expect(try storage(["BAAS_FILES_STORAGE": "local", "BAAS_FILES_ROOT": "/tmp/x"]) is LocalDiskStorage)
        #expect(throws: UsageError.self) { try storage(["BAAS_FILES_STORAGE": "ftp"]) }
        #expect(throws: UsageError.self) {
            try storage(["BAAS_FILES_STORAGE": "s3", "BAAS_FILES_S3_ENDPOINT": "http://x"])
        }
        let s3 = try storage([
            "BAAS_FILES_STORAGE": "s3", "BAAS_FILES_S3_ENDPOINT": "http://127.0.0.1:9000/", "BAAS_FILES_S3_BUCKET": "b",
            "BAAS_FILES_S3_ACCESS_KEY_ID": "k", "BAAS_FILES_S3_SECRET_ACCESS_KEY": "s",
        ])
        #expect((s3 as? S3Storage)?.configuration.endpoint == "http://127.0.0.1:9000")
        #expect((s3 as? S3Storage)?.configuration.region == "us-east-1")
    }
}
