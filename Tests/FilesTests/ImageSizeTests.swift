import Foundation
import InternalProtocol
import PostgresNIO
import TestSupport
import Testing

@testable import FilesService

/// Image sizes (`?width=&height=&fit=&format=`): resized by libvips on first request, cached
/// beside the original, dropped with it; bombs and non-images refused before decoding.
@Suite(.timeLimit(.minutes(20))) struct ImageSizeTests {
    /// The format and size an answer declares in its own header bytes.
    static func shape(_ result: HTTPResult) -> String {
        guard let (format, width, height) = TestImages.dimensions(Array(result.body)) else {
            return "not an image: \(result.status) \(result.text.prefix(200))"
        }
        return "\(format) \(width)x\(height)"
    }

    @Test(arguments: StorageBackend.allCases) func resizedImagesHaveTheAskedSizeFitAndFormat(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            #expect(try await files.upload("pics/photo.png", TestImages.png(width: 320, height: 240)).status == 200)
            let cases: [(query: String, shape: String, type: String)] = [
                ("width=100", "png 100x75", "image/png"),
                ("height=60", "png 80x60", "image/png"),
                ("width=100&height=100", "png 100x75", "image/png"),
                ("width=100&height=100&fit=cover", "png 100x100", "image/png"),
                ("width=50&height=200&fit=fill", "png 50x200", "image/png"),
                // `inside` never enlarges.
                ("width=1000", "png 320x240", "image/png"),
                ("width=64&format=webp", "webp 64x48", "image/webp"),
                ("width=64&format=jpeg", "jpeg 64x48", "image/jpeg"),
            ]
            for (query, shape, type) in cases {
                let answer = try await files.send(.GET, "pics/photo.png?" + query)
                #expect(answer.status == 200, "\(query): \(answer.text.prefix(200))")
                #expect(Self.shape(answer) == shape, "\(query)")
                #expect(answer.headers.first(name: "content-type") == type, "\(query)")
                #expect(answer.headers.first(name: "content-length") == "\(answer.body.count)", "\(query)")
            }
            // A JPEG original answers JPEG unless asked otherwise.
            let jpeg = try await files.send(.GET, "pics/photo.png?width=320&format=jpeg")
            #expect(try await files.upload("pics/photo.jpg", Array(jpeg.body)).status == 200)
            #expect(Self.shape(try await files.send(.GET, "pics/photo.jpg?width=32")) == "jpeg 32x24")
            // Without a size, the original's bytes.
            #expect(try await files.send(.GET, "pics/photo.png").body == Data(TestImages.png(width: 320, height: 240)))
        }
    }

    @Test(arguments: StorageBackend.allCases) func resizedCopiesAreCachedAndDroppedWhenTheOriginalChanges(
        _ backend: StorageBackend
    ) async throws {
        try await FileCluster.with(backend) { files async throws in
            #expect(try await files.upload("avatar.png", TestImages.png(width: 200, height: 100)).status == 200)
            let first = try await files.send(.GET, "avatar.png?width=50")
            let again = try await files.send(.GET, "avatar.png?width=50")
            #expect(Self.shape(first) == "png 50x25")
            let tag = try #require(first.headers.first(name: "etag"))
            #expect(again.headers.first(name: "etag") == tag, "the second request is served from the cache")
            #expect(again.body == first.body)
            #expect(try await files.send(.GET, "avatar.png?width=50", headers: [("If-None-Match", tag)]).status == 304)
            #expect(try await files.storedFiles().count == 2, "the original and its one copy")
            #expect(try await files.renditionRows() == 1)

            // New bytes: the copy goes with the old original, and the next request makes a new one.
            #expect(
                try await files.upload("avatar.png?overwrite=true", TestImages.png(width: 100, height: 100)).status
                    == 200)
            #expect(try await files.renditionRows() == 0)
            let changed = try await files.send(.GET, "avatar.png?width=50")
            #expect(Self.shape(changed) == "png 50x50")
            #expect(changed.headers.first(name: "etag") != tag)
            #expect(try await files.collectGarbage() == 2, "the old original and its copy")
            #expect(try await files.storedFiles().count == 2)

            // A deleted original takes its copies along.
            #expect(try await files.send(.DELETE, "avatar.png").status == 200)
            #expect(try await files.collectGarbage() == 2)
            #expect(try await files.storedFiles().isEmpty)
            #expect(try await files.renditionRows() == 0)
        }
    }

    @Test func bombsNonImagesAndBadSizesAreRefusedAndTheServiceGoesOn() async throws {
        let environment = ["BAAS_FILES_IMAGE_MAX_BYTES": "300000", "BAAS_FILES_IMAGE_MAX_SIDE": "2000"]
        try await FileCluster.with(.local, environment: environment) { files async throws in
            #expect(try await files.upload("bomb.png", try TestImages.bomb()).status == 200)
            let bomb = try await files.send(.GET, "bomb.png?width=100")
            #expect(bomb.status == 422 && bomb.json["code"] as? Int == 6041, "\(bomb.text)")
            #expect((bomb.json["message"] as? String)?.contains("400000000 pixels") == true, "\(bomb.text)")

            #expect(try await files.upload("notes.png", Array("not an image at all".utf8)).status == 200)
            let text = try await files.send(.GET, "notes.png?width=100")
            #expect(text.status == 415 && text.json["code"] as? Int == 6040, "\(text.text)")

            // 400 × 400 RGB, stored uncompressed: over the 300,000-byte bound.
            #expect(try await files.upload("big.png", TestImages.png(width: 400, height: 400)).status == 200)
            let big = try await files.send(.GET, "big.png?width=100")
            #expect(big.status == 422 && big.json["code"] as? Int == 6041, "\(big.text)")

            #expect(try await files.upload("ok.png", TestImages.png(width: 40, height: 40)).status == 200)
            for query in [
                "width=0", "width=2001", "width=abc", "height=-1", "width=10&fit=cover", "width=10&fit=crop",
                "width=10&format=gif", "fit=cover", "format=png",
            ] {
                let answer = try await files.send(.GET, "ok.png?" + query)
                #expect(answer.status == 400 && answer.json["code"] != nil, "\(query): \(answer.text)")
            }
            // A directory has no image to resize.
            #expect(try await files.send(.GET, "?width=10").status == 200)
            #expect(Self.shape(try await files.send(.GET, "ok.png?width=20")) == "png 20x20")
            #expect(
                try await files.storedFiles().count == 5, "four originals and one copy; no scratch file in the root")
            // At most 32 sizes of one image are kept; the 33rd is made, served and let go.
            for width in 1...33 {
                #expect(Self.shape(try await files.send(.GET, "ok.png?width=\(width)")) == "png \(width)x\(width)")
            }
            #expect(try await files.renditionRows() == 32)
        }
    }

    @Test func theGateRunsABoundedNumberAndRefusesBeyondItsQueue() async throws {
        let gate = ResizeGate(running: 1, waiting: 1)
        let (started, startedSink) = AsyncStream.makeStream(of: Int.self)
        let (release, releaseSink) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await gate.run {
                _ = startedSink.yield(1)
                for await _ in release { break }
            }
        }
        var starts = started.makeAsyncIterator()
        #expect(await starts.next() == 1)
        let waiter = Task { try await gate.run { _ = startedSink.yield(2) } }
        while await gate.waitingCount == 0 { await Task.yield() }
        // The queue holds one: a third caller is refused at once.
        await #expect(throws: ImageError.busy) { try await gate.run {} }
        releaseSink.yield()
        try await holder.value
        try await waiter.value
        #expect(await starts.next() == 2)
        // Both places are free again.
        try await gate.run {}
    }
}

extension FileCluster {
    /// Rows of resized copies.
    func renditionRows() async throws -> Int {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
            let rows = try await client.query("SELECT count(*) FROM files.renditions", logger: TestDatabase.logger)
            for try await count in rows.decode(Int.self) { return count }
            return -1
        }
    }

    /// Removes every object due in the garbage (the test clusters' grace is 0); answers how many.
    func collectGarbage() async throws -> Int {
        try await PostgresClient.with(cluster.database, logger: TestDatabase.logger) { client in
            let catalog = FileCatalog(database: client, logger: TestDatabase.logger, deletionGrace: 0)
            let storage: any FileStorage = bucket ?? LocalDiskStorage(root: root)
            return try await GarbageCollector(catalog: catalog, storage: storage, interval: .seconds(3600)).collect()
        }
    }
}
