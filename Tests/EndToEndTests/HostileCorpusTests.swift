import Foundation
import TestSupport
import Testing

/// The hostile-input corpus (`Tests/Corpus/hostile-requests.jsonl`, written by
/// `generate-hostile.py`): SQL in every identifier, parameter and JSON key, path traversal in
/// many encodings, malformed, deeply nested and invalid-UTF-8 JSON, wrong content types, huge
/// numbers and hostile headers, each sent byte for byte through the gateway. Every one is answered
/// 4xx with the error envelope (a read whose parameter may hold the payload: anything but 5xx), the
/// database is unchanged, and the system still serves.
@Suite(.timeLimit(.minutes(30))) struct HostileCorpusTests {
    struct Case: Decodable {
        struct Nested: Decodable {
            let open: String
            let core: String
            let close: String
            let depth: Int
        }

        let id: String
        let category: String
        let method: String
        let path: String
        let key: String
        let expect: String
        let headers: [[String]]?
        let body: String?
        let bodyHex: String?
        let nested: Nested?

        var bytes: [UInt8] {
            if let nested {
                return Array(
                    (String(repeating: nested.open, count: nested.depth) + nested.core
                        + String(repeating: nested.close, count: nested.depth)).utf8)
            }
            if let bodyHex {
                return stride(from: 0, to: bodyHex.count, by: 2).map { offset in
                    let start = bodyHex.index(bodyHex.startIndex, offsetBy: offset)
                    return UInt8(bodyHex[start..<bodyHex.index(start, offsetBy: 2)], radix: 16)!
                }
            }
            return Array((body ?? "").utf8)
        }
    }

    static func corpus() throws -> [Case] {
        let file = PeerProcess.repository.appendingPathComponent("Tests/Corpus/hostile-requests.jsonl")
        return try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(Case.self, from: Data($0.utf8))
        }
    }

    @Test func everyHostileRequestIsRefusedAndChangesNothing() async throws {
        let corpus = try Self.corpus()
        #expect(corpus.count >= 1_000)
        #expect(Set(corpus.map(\.category)).count >= 12)
        try await TestCluster.with(timeLimit: .seconds(600)) { cluster async throws in
            let probe = try await Self.fixtures(cluster)
            let before = try await DatabaseChecksum.of(cluster.database)
            let failures = try await Self.send(corpus, to: cluster, probe: probe)
            #expect(
                failures.isEmpty,
                "\(failures.count) of \(corpus.count) cases: \(failures.prefix(25).joined(separator: "\n"))")
            #expect(try await DatabaseChecksum.of(cluster.database) == before)
            let read = try await cluster.send(.GET, "/data/Probe/\(probe)", key: .serverCode)
            #expect(read.status == 200 && read.json["name"] as? String == "probe", "\(read.text)")
            let info = try await cluster.send(.GET, "/info")
            #expect(info.status == 200 && info.json["ready"] as? Bool == true, "\(info.text)")
        }
    }

    /// What the corpus' paths name: table Probe (name, v, a relation rel), one object (its id is
    /// answered), an email template, a channel with a message, a file.
    static func fixtures(_ cluster: TestCluster) async throws -> String {
        let columns = #"[{"name": "name", "type": "STRING"}, {"name": "v", "type": "INT"}]"#
        #expect(try await cluster.send(.POST, "/data/Probe/properties", columns, key: .serverCode).status == 200)
        let relation = #"{"name": "rel", "type": "DATA_REF", "relatedTable": "Probe"}"#
        #expect(try await cluster.send(.POST, "/data/Probe/properties", relation, key: .serverCode).status == 200)
        let object = try await cluster.send(.POST, "/data/Probe", #"{"name": "probe", "v": 1}"#, key: .serverCode)
        let id = try #require(object.json["objectId"] as? String, "\(object.text)")
        let template = #"{"subject": "s", "bodyparts": {"textmessage": "t"}}"#
        #expect(try await cluster.send(.PUT, "/emailtemplate/probe", template, key: .serverCode).status == 200)
        #expect(
            try await cluster.send(.POST, "/messaging/probe", #"{"message": "hi"}"#, key: .serverCode).status == 200)
        let boundary = "corpus"
        let upload =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n"
            + "Content-Type: text/plain\r\n\r\nprobe\r\n--\(boundary)--\r\n"
        let file = try await HTTPTestClient.send(
            .POST, cluster.gatewayURL + cluster.prefix(.serverCode) + "/files/probe/a.txt",
            headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: Data(upload.utf8))
        #expect(file.status == 200, "\(file.text)")
        return id
    }

    /// Sends every case (four at a time) and answers a line for each that was not answered as expected.
    static func send(_ corpus: [Case], to cluster: TestCluster, probe: String) async throws -> [String] {
        let keys = ["serverCode": cluster.app.keys[.serverCode]!, "rest": cluster.app.keys[.rest]!]
        return try await withThrowingTaskGroup(of: [String].self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var failures: [String] = []
                    for entry in corpus.enumerated() where entry.offset % 4 == worker {
                        let item = entry.element
                        let target =
                            "/\(cluster.app.id)/\(keys[item.key]!)/"
                            + item.path.replacingOccurrences(of: "PROBE_ID", with: probe)
                        let headers = (item.headers ?? []).map { ($0[0], $0[1]) }
                        let (status, response) = try await RawHTTPClient.send(
                            port: cluster.port, method: item.method, target: target, headers: headers, body: item.bytes)
                        if let problem = Self.problem(status: status, response: response, expect: item.expect) {
                            failures.append("\(item.id): \(problem)")
                        }
                    }
                    return failures
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }

    /// Why an answer is not what the case expects, or nil.
    static func problem(status: Int, response: String, expect: String) -> String? {
        let body = RawHTTPClient.body(of: response)
        if expect == "read" {
            return (200..<500).contains(status) ? nil : "\(status) \(body.prefix(200))"
        }
        guard (400..<500).contains(status) else { return "\(status) \(body.prefix(200))" }
        guard let envelope = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
            envelope["code"] is Int, envelope["message"] is String
        else { return "\(status) without the error envelope: \(body.prefix(200))" }
        return nil
    }
}
