import Foundation
import Hummingbird
import NIOCore
import NIOHTTP1
import StreamTestSupport
import TestSupport
import Testing

@testable import FilesService

/// Uploads from a URL (`{"url": …}`): fetched over http(s) with at most three redirects, cut at
/// the upload limit, and never sent to loopback, private or link-local addresses unless the
/// allow-list names the host and port.
@Suite(.timeLimit(.minutes(20))) struct URLUploadTests {
    /// A web server on a free loopback port: `/file/N` (N pattern bytes), `/redirect/N` (N
    /// redirects, then a file), anything else 404.
    static func withSource(_ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("file/:size") { _, context -> Response in
            let size = Int(context.parameters.get("size") ?? "") ?? 0
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream"],
                body: .init(byteBuffer: BytePattern.bytes(0..<size)))
        }
        router.get("redirect/:count") { _, context -> Response in
            let count = Int(context.parameters.get("count") ?? "") ?? 0
            return Response(status: .found, headers: [.location: count <= 1 ? "/file/1000" : "/redirect/\(count - 1)"])
        }
        let (ports, port) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in port.yield(channel.localAddress?.port ?? 0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await app.runService(gracefulShutdownSignals: []) }
            var iterator = ports.makeAsyncIterator()
            let bound = await iterator.next() ?? 0
            do {
                try await body(bound)
            } catch {
                group.cancelAll()
                throw error
            }
            group.cancelAll()
        }
    }

    func upload(_ files: FileCluster, _ path: String, url: String) async throws -> HTTPResult {
        try await files.send(
            .POST, path, headers: [("Content-Type", "application/json")], body: Data(#"{"url": "\#(url)"}"#.utf8))
    }

    @Test func sourcesAreFetchedFollowedAndCut() async throws {
        try await Self.withSource { port in
            // Allow-list entries name ports: a bare host would mean only 80 and 443.
            let environment = [
                "BAAS_FILES_URL_ALLOWED_HOSTS": "127.0.0.1:\(port)", "BAAS_FILES_MAX_UPLOAD_BYTES": "1000000",
            ]
            try await FileCluster.with(.local, environment: environment) { files async throws in
                let source = "http://127.0.0.1:\(port)"
                let fetched = try await upload(files, "web/a.bin", url: source + "/file/5000")
                #expect(
                    fetched.json["fileURL"] as? String == FileCluster.publicURL + files.cluster.prefix()
                        + "/files/web/a.bin", "\(fetched.text)")
                #expect(
                    try await files.send(.GET, "web/a.bin").body == Data(BytePattern.bytes(0..<5000).readableBytesView))
                #expect(try await upload(files, "web/a.bin", url: source + "/file/10").json["code"] as? Int == 6003)
                #expect(try await upload(files, "web/r3.bin", url: source + "/redirect/3").status == 200)
                #expect(try await files.send(.GET, "web/r3.bin").body.count == 1000)
                let appended = try await upload(files, "append/web/r3.bin", url: source + "/file/24")
                #expect(appended.status == 200, "\(appended.text)")
                #expect(try await files.send(.GET, "web/r3.bin").body.count == 1024)
                let cases: [(String, Int, Int)] = [
                    (source + "/redirect/4", 400, 6032),
                    (source + "/nothing", 502, 6033),
                    (source + "/file/2000000", 413, 413),
                    ("file:///etc/passwd", 400, 6032),
                    ("ftp://127.0.0.1/x", 400, 6032),
                    ("gopher://127.0.0.1:70/x", 400, 6032),
                    ("http://user:secret@127.0.0.1:\(port)/file/1", 400, 6032),
                    ("not a url", 400, 6032),
                ]
                for (url, status, code) in cases {
                    let answer = try await upload(files, "web/refused.bin", url: url)
                    #expect(answer.status == status && answer.json["code"] as? Int == code, "\(url): \(answer.text)")
                }
                #expect(try await files.send(.GET, "web/refused.bin?action=exists").text == "false")
                #expect(try await files.send(.GET, "web?action=count").text == "2")
            }
        }
    }

    @Test func internalAddressesAreRefusedWithoutTheAllowList() async throws {
        try await Self.withSource { port in
            try await FileCluster.with(.local) { files async throws in
                for url in [
                    "http://127.0.0.1:\(port)/file/10", "http://localhost:\(port)/file/10",
                    "http://[::1]:\(port)/file/10",
                    "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/", "http://192.168.1.1/",
                    "http://[::ffff:127.0.0.1]:\(port)/file/10", "http://0.0.0.0:\(port)/file/10",
                ] {
                    let answer = try await upload(files, "x.bin", url: url)
                    #expect(answer.status == 400 && answer.json["code"] as? Int == 6032, "\(url): \(answer.text)")
                }
                #expect(try await files.storedFiles().isEmpty)
            }
        }
    }

    @Test func onlyPublicUnicastAddressesPass() {
        let refused: [[UInt8]] = [
            [127, 0, 0, 1], [10, 1, 2, 3], [172, 16, 0, 1], [172, 31, 255, 255], [192, 168, 0, 1],
            [169, 254, 169, 254],
            [100, 64, 0, 1], [0, 0, 0, 0], [224, 0, 0, 1], [255, 255, 255, 255], [198, 18, 0, 1],
            Array(repeating: 0, count: 15) + [1], Array(repeating: 0, count: 16),
            [0xFE, 0x80] + Array(repeating: 0, count: 14),
            [0xFD, 0x12] + Array(repeating: 0, count: 14), [0xFF, 0x02] + Array(repeating: 0, count: 14),
            Array(repeating: 0, count: 10) + [0xFF, 0xFF, 127, 0, 0, 1],
            [0x00, 0x64, 0xFF, 0x9B] + Array(repeating: 0, count: 8) + [10, 0, 0, 1],
            Array(repeating: 0, count: 12) + [10, 0, 0, 1],
            [0x20, 0x02, 127, 0, 0, 1] + Array(repeating: 0, count: 10),
            [0x20, 0x01, 0x0D, 0xB8] + Array(repeating: 0, count: 12), [0xFE, 0xC0] + Array(repeating: 0, count: 14),
            [192, 0, 2, 1], [198, 51, 100, 1], [203, 0, 113, 1],
        ]
        for address in refused { #expect(!AddressPolicy.isPublic(address), "\(address)") }
        let allowed: [[UInt8]] = [
            [93, 184, 216, 34], [8, 8, 8, 8], [172, 32, 0, 1], [100, 128, 0, 1],
            [0x26, 0x06, 0x28, 0x00] + Array(repeating: 0, count: 11) + [1],
            Array(repeating: 0, count: 10) + [0xFF, 0xFF, 8, 8, 8, 8],
            [0x20, 0x02, 8, 8, 8, 8] + Array(repeating: 0, count: 10),
        ]
        for address in allowed { #expect(AddressPolicy.isPublic(address), "\(address)") }
    }
}
