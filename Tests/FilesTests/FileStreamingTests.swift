import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import PostgresNIO
import ServiceRuntime
import StreamTestSupport
import TestSupport
import Testing

/// Bytes streamed through gateway and files-service: large files arrive whole, an aborted upload
/// leaves nothing anywhere, concurrent writers never mix, and no hostile path writes anything.
@Suite(.timeLimit(.minutes(20))) struct FileStreamingTests {
    static let large = 64 << 20

    @Test(arguments: StorageBackend.allCases) func aLargeUploadStreamsInAndOutWhole(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            var request = HTTPClientRequest(url: files.base + "/files/big/blob.bin")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: MultipartForm(file: []).contentType)
            let form = StreamedForm(size: Self.large)
            request.body = .stream(form, length: .known(Int64(form.length)))
            let response = try await HTTPClient.shared.execute(request, timeout: .minutes(4))
            #expect(response.status == .ok)
            _ = try await response.body.collect(upTo: 1 << 16)
            let download = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: files.base + "/files/big/blob.bin"), timeout: .minutes(4))
            #expect(download.headers.first(name: "content-length") == "\(Self.large)")
            var hash = SHA256()
            var count = 0
            for try await chunk in download.body {
                chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) }
                count += chunk.readableBytes
            }
            #expect(count == Self.large)
            #expect(BytePattern.hex(hash.finalize()) == BytePattern.sha256(0..<Self.large))
        }
    }

    @Test(arguments: StorageBackend.stores) func anAbortedUploadLeavesNoFileNoRowAndNoTemporaryFile(
        _ backend: StorageBackend
    ) async throws {
        try await FileCluster.with(backend) { files async throws in
            var request = HTTPClientRequest(url: files.base + "/files/aborted.bin")
            request.method = .POST
            request.headers.add(name: "Content-Type", value: MultipartForm(file: []).contentType)
            let form = StreamedForm(size: Self.large, failAfter: Self.large / 2)
            request.body = .stream(form, length: .known(Int64(form.length)))
            await #expect(throws: (any Error).self) {
                _ = try await HTTPClient.shared.execute(request, timeout: .minutes(2))
            }
            // A body that ends without its closing delimiter is refused too.
            var truncated = MultipartForm(file: Array(repeating: 1, count: 1000)).body
            truncated.removeLast(10)
            let refused = try await HTTPTestClient.send(
                .POST, files.base + "/files/truncated.bin",
                headers: [("Content-Type", MultipartForm(file: []).contentType)], body: Data(truncated))
            #expect(refused.status == 400, "\(refused.text)")
            // The service hears of the abort through the stream's reset, asynchronously.
            try await withTimeout(.seconds(60)) {
                while true {
                    let (stored, pending) = (try await files.storedFiles(), try await files.pendingUploads())
                    if stored.isEmpty && pending.isEmpty { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(try await files.send(.GET, "aborted.bin?action=exists").text == "false")
            #expect(try await files.send(.GET, "truncated.bin?action=exists").text == "false")
            #expect(try await rowCount(files) == 0)
        }
    }

    /// files-service refuses these before reading the body: the gateway must stop reading the
    /// client's body before answering (the connection's handler reads the rest, and two readers
    /// of one body crashed the process).
    @Test func uploadsRefusedBeforeTheirBodyIsReadLeaveTheGatewayServing() async throws {
        try await FileCluster.with { files async throws in
            #expect(try await files.upload("taken.bin", [1]).status == 200)
            for attempt in 0..<6 {
                var request = HTTPClientRequest(
                    url: files.base + "/files/" + (attempt % 2 == 0 ? "taken.bin" : "..%2fx.bin"))
                request.method = .POST
                request.headers.add(name: "Content-Type", value: MultipartForm(file: []).contentType)
                let form = StreamedForm(size: 32 << 20)
                request.body = .stream(form, length: .known(Int64(form.length)))
                if let response = try? await HTTPClient.shared.execute(request, timeout: .minutes(2)) {
                    // A taken path conflicts (409); a path outside the tree is a bad request.
                    #expect(response.status == (attempt % 2 == 0 ? .conflict : .badRequest))
                    _ = try? await response.body.collect(upTo: 1 << 16)
                }
                #expect(try await files.send(.GET, "taken.bin").body == Data([1]), "attempt \(attempt)")
            }
        }
    }

    @Test(arguments: StorageBackend.allCases) func concurrentWritersToOnePathNeverMix(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            let writers = 20
            let size = 256 << 10
            try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let bytes = [UInt8](repeating: UInt8(writer), count: size)
                        return try await files.upload("shared.bin", bytes, query: "?overwrite=true").status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let result = try await files.send(.GET, "shared.bin")
            #expect(result.body.count == size)
            #expect(Set(result.body).count == 1, "the file mixes several writers' bytes")
            // One object per write; all but the current one are garbage.
            #expect(try await files.storedFiles().count == writers)
        }
    }

    /// Hostile paths on every route: each refused with a 4xx, and nothing written anywhere.
    /// 133 of them: the raw-escape cases below, and every spelling the normalisation's unit test
    /// refuses, alone and below one and two directories. On local disk a symlink planted in the
    /// app's folder and pointing outside it is never followed: client paths never reach the disk.
    @Test(arguments: StorageBackend.stores) func hostilePathsWriteNothingAnywhere(_ backend: StorageBackend)
        async throws
    {
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: outside) }
        try await FileCluster.with(backend) { files async throws in
            let raw = [
                "..%2f..%2fescape.txt", "%2e%2e/%2e%2e/escape.txt", "a/%2e%2e/%2e%2e/escape.txt", "..%5cescape.txt",
                "a%5c..%5c..%5cescape.txt", "escape%00.txt", "%c0%ae%c0%ae/escape.txt", "%252e%252e%252fescape.txt",
                "a%0d%0aSet-Cookie:x.txt", "%e0%80%ae%e0%80%ae/escape.txt", "C:%5cescape.txt", "%ff.txt",
                String(repeating: "n", count: 300) + ".txt",
            ]
            let hostile =
                raw + ["", "dir/", "dir/sub/"].flatMap { prefix in FilePathTests.hostile.map { prefix + $0 } }
            #expect(hostile.count == 133)
            if backend == .local {
                let folder = files.root + "/" + files.cluster.app.id
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: folder + "/evil", withDestinationPath: outside)
            }
            let prefix = files.cluster.prefix()
            let form = MultipartForm(file: [1, 2, 3])
            for path in hostile {
                // Sent raw: URL-parsing clients rewrite escapes that are not UTF-8.
                let requests: [(String, String, [(String, String)], [UInt8])] = [
                    ("POST", "/files/" + path, [("Content-Type", form.contentType)], form.body),
                    ("PUT", "/files/binary/" + path, [("Content-Type", "text/plain")], Array("AQID".utf8)),
                    ("POST", "/files/" + path + "/", [], []),
                    ("GET", "/files/" + path, [], []),
                    ("DELETE", "/files/" + path, [], []),
                ]
                for (method, target, headers, body) in requests {
                    let answer = try await RawHTTPClient.send(
                        port: files.cluster.port, method: method, target: prefix + target, headers: headers, body: body)
                    // Malformed escapes and escapes that are not UTF-8 the gateway refuses (400),
                    // bytes no request line may hold its HTTP parser; the rest reach
                    // files-service's one normalisation (6006).
                    #expect((400..<500).contains(answer.status), "\(method) \(target): \(answer.response.prefix(400))")
                    if answer.response.contains(#""code""#) && answer.status == 400 {
                        #expect(
                            answer.response.contains(#""code":6006"#) || answer.response.contains(#""code":400"#),
                            "\(method) \(target): \(answer.response.prefix(400))")
                    }
                }
            }
            // A legitimate path through the planted link's name still lands under a random key.
            #expect(try await files.upload("evil/inside.txt", [1]).status == 200)
            let stored = try await files.storedFiles()
            #expect(stored.count == 1 && !stored[0].hasPrefix(files.cluster.app.id + "/evil"), "\(stored)")
            #expect(try await rowCount(files) == 2, "evil/ and evil/inside.txt")
            #expect(try FileManager.default.contentsOfDirectory(atPath: outside).isEmpty)
            let parent = URL(fileURLWithPath: files.root).deletingLastPathComponent().path
            #expect(!FileManager.default.fileExists(atPath: parent + "/escape.txt"))
        }
    }

    func rowCount(_ files: FileCluster) async throws -> Int {
        try await PostgresClient.with(files.cluster.database, logger: TestDatabase.logger) { client in
            let rows = try await client.query("SELECT count(*) FROM files.entries", logger: TestDatabase.logger)
            for try await count in rows.decode(Int.self) { return count }
            return -1
        }
    }

    /// With `BAAS_GATEWAY_FILES_ROOT` the gateway reads a download's bytes from its own view of
    /// the store: a mirror holding other bytes under the same name answers them.
    @Test func theGatewaySendsDownloadsFromItsViewOfTheStore() async throws {
        let mirror = FileManager.default.temporaryDirectory.appendingPathComponent("mirror-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: mirror) }
        try await FileCluster.with(.local, environment: ["BAAS_GATEWAY_FILES_ROOT": mirror]) { files async throws in
            #expect(try await files.upload("a.txt", Array("original bytes".utf8)).status == 200)
            // Nothing in the gateway's view yet: an error answer, not a 200 cut short.
            let missing = try await files.send(.GET, "a.txt")
            #expect(missing.status == 500 && missing.json["code"] as? Int == 500, "\(missing.status) \(missing.text)")
            let object = try #require(try await files.storedFiles().first)
            let copy = mirror + "/" + object
            try FileManager.default.createDirectory(
                atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data("MIRRORED bytes".utf8).write(to: URL(fileURLWithPath: copy))
            let whole = try await files.send(.GET, "a.txt")
            #expect(whole.status == 200 && whole.text == "MIRRORED bytes")
            let part = try await files.send(.GET, "a.txt", headers: [("Range", "bytes=0-7")])
            #expect(part.status == 206 && part.text == "MIRRORED", "\(part.text)")
            #expect(part.headers.first(name: "content-range") == "bytes 0-7/14")
            #expect(part.headers.first(name: "x-baas-file-location") == nil, "internal headers stay inside")
            // An empty file has no bytes to send: files-service answers it.
            #expect(try await files.upload("empty.txt", []).status == 200)
            let empty = try await files.send(.GET, "empty.txt")
            #expect(empty.status == 200 && empty.body.isEmpty)
        }
    }
}
