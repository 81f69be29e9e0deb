import AsyncHTTPClient
import Foundation
import InternalProtocol
import NIOCore
import ServiceRuntime
import StreamTestSupport
import TestSupport
import Testing

/// Buffered routes travel from the gateway to their service as calls on a lane: answers larger
/// than a frame arrive whole and in order, a client that leaves or a deadline that passes stops
/// the service's work, and an answer failing midway ends the client's response with an error.
@Suite(.timeLimit(.minutes(20))) struct LaneCallTests {
    /// The deadline of internal calls in the cluster of the deadline test: long enough for a
    /// busy machine's other calls, short enough to wait for.
    static let deadline = Duration.seconds(15)

    static func withCluster(
        environment: [String: String] = [:], _ body: @Sendable (TestCluster, String) async throws -> Void
    ) async throws {
        try await TestCluster.with(environment: environment, replacing: [.files: StreamTestService.self]) {
            cluster async throws in
            try await body(cluster, cluster.gatewayURL + cluster.prefix())
        }
    }

    @Test func anAnswerOfManyPartsArrivesWholeAndInOrder() async throws {
        try await Self.withCluster { _, base async throws in
            let size = 3 << 20 + 12_345
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/lane/blob/\(size)"), timeout: .seconds(60))
            #expect(response.status == .ok)
            #expect(response.headers.first(name: "content-length") == "\(size)")
            let body = try await response.body.collect(upTo: size + 1)
            #expect(body == BytePattern.bytes(0..<size))
        }
    }

    /// The call's credit and the lane's buffers bound what the service produces ahead of a
    /// client that stopped reading; once the client leaves, the call is cancelled.
    @Test func aClientLeavingALargeAnswerStopsTheService() async throws {
        try await Self.withCluster { _, base async throws in
            let (id, size) = (UUID().uuidString, 1 << 30)
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/lane/blob/\(size)?id=\(id)"), timeout: .seconds(60))
            #expect(response.status == .ok)
            var read = 0
            for try await chunk in response.body {
                read += chunk.readableBytes
                if read >= 1 << 20 { break }
            }
            try await withTimeout(.seconds(60)) {
                while await StreamTestService.transfers.outcome(id) == nil {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(await StreamTestService.transfers.outcome(id) == .aborted)
            #expect(StreamTestService.produced.bytes(id) < size / 4)
        }
    }

    @Test func aCallPastItsDeadlineIs504AndTheServiceStops() async throws {
        let environment = ["BAAS_INTERNAL_TIMEOUT_MS": "\(Self.deadline.components.seconds * 1000)"]
        try await Self.withCluster(environment: environment) { _, base async throws in
            let id = UUID().uuidString
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/lane/slow?id=\(id)"), timeout: .seconds(120))
            #expect(response.status.code == 504)
            let envelope = try JSONDecoder().decode(
                ErrorEnvelope.self, from: try await response.body.collect(upTo: 1 << 16))
            #expect(envelope.code == 504)
            try await withTimeout(.seconds(60)) {
                while await StreamTestService.transfers.outcome(id) == nil {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(await StreamTestService.transfers.outcome(id) == .aborted)
        }
    }

    @Test func anAnswerFailingMidwayEndsTheClientsResponseWithAnError() async throws {
        try await Self.withCluster { _, base async throws in
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: base + "/files/lane/broken"), timeout: .seconds(60))
            #expect(response.status == .ok)
            await #expect(throws: (any Error).self) {
                _ = try await response.body.collect(upTo: 2 << 20)
            }
        }
    }
}
