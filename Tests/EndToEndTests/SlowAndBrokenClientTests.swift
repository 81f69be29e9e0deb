import Foundation
import TestSupport
import Testing

/// Clients that misbehave on purpose: ones trickling a request head (slowloris) are cut at the
/// configured head timeout while everyone else is served; ones that vanish mid-request leave
/// nothing half-written and the system serving.
@Suite(.timeLimit(.minutes(20))) struct SlowAndBrokenClientTests {
    static let headTimeout = ["BAAS_GATEWAY_HEAD_TIMEOUT_MS": "2000"]

    @Test func slowHeadsAreCutWhileOthersAreServed() async throws {
        try await TestCluster.with(environment: Self.headTimeout) { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Slow", #"{"name": "a"}"#)
            let target = "\(cluster.prefix())/data/Slow"
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        try await RawConnection.with(port: cluster.port) { inbound, outbound in
                            try await outbound.write("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                            let trickle = Task {
                                // A header line every 300 ms, never the blank line ending the head.
                                while !Task.isCancelled {
                                    try await Task.sleep(for: .milliseconds(300))
                                    try await outbound.write("X-Slow: 1\r\n")
                                }
                            }
                            defer { trickle.cancel() }
                            return try await inbound.untilClosed()
                        }
                    }
                }
                for _ in 0..<20 {
                    let answer = try await cluster.send(.GET, "/data/Slow")
                    #expect(answer.status == 200, "\(answer.text)")
                }
                // Every slow connection ends: closed by the gateway without an answer.
                for try await received in group { #expect(received.isEmpty, "\(received.prefix(200))") }
            }
            let after = try await cluster.send(.GET, "/data/Slow")
            #expect(after.status == 200 && after.items.count == 1, "\(after.text)")
        }
    }

    /// A connection that sends nothing, or only part of the HTTP/2 preface, is closed too.
    @Test func silentConnectionsAreClosed() async throws {
        try await TestCluster.with(environment: Self.headTimeout) { cluster async throws in
            let silent = try await RawConnection.with(port: cluster.port) { inbound, _ in
                try await inbound.untilClosed()
            }
            #expect(silent.isEmpty, "\(silent.prefix(200))")
            let partial = try await RawConnection.with(port: cluster.port) { inbound, outbound in
                try await outbound.write("PRI * HTTP/2.0\r\n")
                return try await inbound.untilClosed()
            }
            #expect(partial.isEmpty, "\(partial.prefix(200))")
        }
    }

    /// A connection idle after its answer is closed at the head timeout too.
    @Test func anIdleConnectionIsClosedAfterItsAnswer() async throws {
        try await TestCluster.with(environment: Self.headTimeout) { cluster async throws in
            let received = try await RawConnection.with(port: cluster.port) { inbound, outbound in
                try await outbound.write("GET \(cluster.prefix())/data/Idle HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                return try await inbound.untilClosed()
            }
            #expect(received.hasPrefix("HTTP/1.1 404"), "\(received.prefix(200))")
            #expect(received.contains("\"code\":1009"), "\(received.prefix(400))")
        }
    }

    /// Bodies cut short by a client that leaves: no object, no file, and the system serves on.
    @Test func requestsCutShortLeaveNothingHalfWritten() async throws {
        try await TestCluster.with(environment: Self.headTimeout) { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Cut", #"{"name": "first"}"#)
            let object = #"{"name": "\#(String(repeating: "x", count: 2_000))"}"#
            for length in [10, 500, 1_500] {
                try await RawConnection.with(port: cluster.port) { _, outbound in
                    try await outbound.write(
                        "POST \(cluster.prefix())/data/Cut HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            + "Content-Length: \(object.utf8.count)\r\n\r\n" + String(object.prefix(length)))
                }
            }
            let boundary = "cut"
            let upload =
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"c.txt\"\r\n\r\n"
                + String(repeating: "y", count: 100_000)
            try await RawConnection.with(port: cluster.port) { _, outbound in
                try await outbound.write(
                    "POST \(cluster.prefix(.serverCode))/files/cut/c.txt HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: 1000000\r\n\r\n"
                        + upload)
            }
            for _ in 0..<20 {
                try await RawConnection.with(port: cluster.port) { _, outbound in
                    try await outbound.write("GET \(cluster.prefix())/data/Cut HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                }
            }
            // Past the head timeout: whatever the gateway and the services do with the cut
            // requests is done by then.
            try await Task.sleep(for: .seconds(3))
            let count = try await cluster.send(.GET, "/data/Cut/count")
            #expect(count.text == "1", "\(count.text)")
            let file = try await cluster.send(.GET, "/files/cut/c.txt", key: .serverCode)
            #expect(file.status == 404, "\(file.status) \(file.text.prefix(200))")
        }
    }
}
