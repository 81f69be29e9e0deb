import AsyncHTTPClient
import Crypto
import Foundation
import InternalProtocol
import NIOCore
import NIOFoundationCompat
import ServiceRuntime
import StreamTestSupport
import TestSupport
import Testing

/// Bodies stream through the gateway and the internal HTTP/2 hop in both directions: a stalled
/// reader holds the producer back, large bodies arrive whole and in order, headers for ranges and
/// caching cross, and a failure on either side ends the other rather than leaving a silent
/// truncation.
@Suite(.timeLimit(.minutes(20))) struct StreamingTests {
    /// Large enough to cross every window and buffer on the way many times over.
    static let large = 256 << 20
    static let gigabyte = 1 << 30

    static func withCluster(
        mostlyWaiting: Bool = false, _ body: @Sendable (TestCluster, String) async throws -> Void
    ) async throws {
        try await TestCluster.with(replacing: [.files: StreamTestService.self], mostlyWaiting: mostlyWaiting) {
            cluster async throws in
            try await body(cluster, cluster.gatewayURL + cluster.prefix())
        }
    }

    @Test func aLargeUploadIsHashedAsItArrives() async throws {
        try await Self.withCluster { _, base async throws in
            var request = HTTPClientRequest(url: base + "/files/hash/large")
            request.method = .PUT
            request.body = .stream(BytePattern(range: 0..<Self.large), length: .known(Int64(Self.large)))
            let response = try await HTTPClient.shared.execute(request, timeout: .minutes(4))
            #expect(response.status == .ok)
            let body = try await response.body.collect(upTo: 1 << 16)
            let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: String]
            #expect(json?["bytes"] == "\(Self.large)")
            #expect(json?["sha256"] == BytePattern.sha256(0..<Self.large))
        }
    }

    @Test func aLargeDownloadArrivesWholeAndInOrder() async throws {
        try await Self.withCluster { _, base async throws in
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/blob/\(Self.large)"), timeout: .minutes(4))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "content-length") == "\(Self.large)")
            var hash = SHA256()
            for try await chunk in response.body { chunk.withUnsafeReadableBytes { hash.update(bufferPointer: $0) } }
            #expect(BytePattern.hex(hash.finalize()) == BytePattern.sha256(0..<Self.large))
        }
    }

    /// How far the service may run ahead of a client that stops reading: the HTTP/2 windows of
    /// the internal hop and the sockets' buffers. Without pacing it ran about 100 MiB ahead.
    static let aheadBound = 48 << 20

    @Test func aStalledReaderHoldsTheServiceBack() async throws {
        try await Self.withCluster { _, base async throws in
            let id = UUID().uuidString
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/blob/\(Self.gigabyte)?id=\(id)"), timeout: .seconds(60))
            #expect(response.status == .ok)
            // Wait until production settles (two samples a second apart agree), whatever the load.
            let produced = try await withTimeout(.seconds(60)) {
                var last = -1
                while true {
                    let now = StreamTestService.produced.bytes(id)
                    if now == last, now > 0 { return now }
                    last = now
                    try await Task.sleep(for: .seconds(1))
                }
            }
            #expect(produced < Self.aheadBound, "the service ran \(produced >> 20) MiB ahead")
        }
    }

    @Test func rangesAndConditionalRequestsCrossTheGateway() async throws {
        try await Self.withCluster { _, base async throws in
            let url = base + "/files/blob/100000"
            let partial = try await HTTPTestClient.send(.GET, url, headers: [("Range", "bytes=100-199")])
            #expect(partial.status == 206)
            #expect(partial.headers.first(name: "content-range") == "bytes 100-199/100000")
            #expect(partial.body == Data(buffer: BytePattern.bytes(100..<200)))
            let whole = try await HTTPTestClient.send(.GET, url)
            let etag = try #require(whole.headers.first(name: "etag"))
            #expect(whole.headers.first(name: "accept-ranges") == "bytes")
            let cached = try await HTTPTestClient.send(.GET, url, headers: [("If-None-Match", etag)])
            #expect(cached.status == 304)
            #expect(cached.body.isEmpty)
        }
    }

    @Test func anOversizedStreamIs413WhetherDeclaredOrNot() async throws {
        try await Self.withCluster { _, base async throws in
            let size = 4 * StreamTestService.smallLimit
            let declared = try await HTTPTestClient.send(
                .PUT, base + "/files/small", body: Data(buffer: BytePattern.bytes(0..<size)))
            #expect(declared.status == 413 && declared.json["code"] as? Int == 413)
            var undeclared = HTTPClientRequest(url: base + "/files/small")
            undeclared.method = .PUT
            undeclared.body = .stream(BytePattern(range: 0..<size), length: .unknown)
            let response = try await HTTPClient.shared.execute(undeclared, timeout: .seconds(60))
            #expect(response.status.code == 413)
            let body = try await response.body.collect(upTo: 1 << 16)
            #expect(try JSONDecoder().decode(ErrorEnvelope.self, from: body).code == 413)
        }
    }

    @Test func aClientAbortingAnUploadEndsTheServicesHandler() async throws {
        try await Self.withCluster { _, base async throws in
            let id = UUID().uuidString
            var request = HTTPClientRequest(url: base + "/files/hash/\(id)")
            request.method = .PUT
            let size = 64 << 20
            request.body = .stream(BytePattern(range: 0..<size, failAfter: size / 2), length: .known(Int64(size)))
            await #expect(throws: (any Error).self) {
                _ = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
            }
            // The handler hears of it through the internal stream's reset, asynchronously.
            try await withTimeout(.seconds(30)) {
                while await StreamTestService.transfers.outcome(id) == nil {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(await StreamTestService.transfers.outcome(id) == .aborted)
        }
    }

    @Test func aServiceFailingMidDownloadEndsTheClientsResponseWithAnError() async throws {
        try await Self.withCluster { _, base async throws in
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/broken"), timeout: .seconds(60))
            #expect(response.status == .ok)
            await #expect(throws: (any Error).self) {
                _ = try await response.body.collect(upTo: 2 << 20)
            }
        }
    }
}
