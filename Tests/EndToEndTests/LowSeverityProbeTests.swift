import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Four holes an attacker's probe found, each answered through the gateway as a client sees it:
/// password guesses through `verifypassowrd` that escaped the lockout, uploads from URLs that
/// told a closed port from a forbidden one, JSON objects of any number of keys, and an
/// unknown-table message that said its opening twice.
@Suite(.timeLimit(.minutes(20))) struct LowSeverityProbeTests {
    /// How often `needle` occurs in `text`.
    static func occurrences(of needle: String, in text: String) -> Int {
        text.components(separatedBy: needle).count - 1
    }

    @Test func verifyPasswordGuessesCountTowardsTheLoginLockout() async throws {
        try await TestCluster.shared { cluster async throws in
            func verify(_ password: String, token: String) async throws -> HTTPResult {
                try await cluster.send(.POST, "/users/verifypassowrd", #"{"password": "\#(password)"}"#, token: token)
            }
            func login(_ email: String, _ password: String) async throws -> HTTPResult {
                try await cluster.send(.POST, "/users/login", #"{"login": "\#(email)", "password": "\#(password)"}"#)
            }
            // The default policy locks an account after 5 failures within 15 minutes.
            let guessed = try await cluster.account("guessed@x.com")
            for _ in 0..<5 {
                let guess = try await verify("guess", token: guessed.token)
                #expect(guess.status == 200 && guess.text == #"{"valid":false}"#, "\(guess.text)")
            }
            let locked = try await login("guessed@x.com", "pw")
            #expect(locked.status == 401 && locked.json["code"] as? Int == 3036, "\(locked.text)")
            let lockedVerify = try await verify("pw", token: guessed.token)
            #expect(lockedVerify.status == 401 && lockedVerify.json["code"] as? Int == 3036, "\(lockedVerify.text)")

            // One counter: failed logins and failed verifications add up.
            let mixed = try await cluster.account("mixed@x.com")
            for _ in 0..<4 {
                let failed = try await login("mixed@x.com", "guess")
                #expect(failed.status == 401 && failed.json["code"] as? Int == 3003, "\(failed.text)")
            }
            #expect(try await verify("guess", token: mixed.token).text == #"{"valid":false}"#)
            let afterMixed = try await verify("pw", token: mixed.token)
            #expect(afterMixed.status == 401 && afterMixed.json["code"] as? Int == 3036, "\(afterMixed.text)")
        }
    }

    @Test func uploadsFromURLsAnswerOneErrorForEverySourceTheyCannotReach() async throws {
        // Nothing listens on either port; only `closed` is allowed, and a bare host means 80/443.
        let closed = try await FreePort.next()
        let unlisted = try await FreePort.next()
        let environment = ["BAAS_FILES_URL_ALLOWED_HOSTS": "127.0.0.1:\(closed),localhost"]
        try await TestCluster.with(environment: environment) { cluster async throws in
            let sources = [
                "http://127.0.0.1:\(closed)/x",  // allowed: the connection is refused
                "http://127.0.0.1:\(unlisted)/x",  // a port the allow-list does not name
                "http://localhost:\(closed)/x",  // a bare host's entry covers ports 80 and 443 only
                "http://[::1]:\(closed)/x",  // loopback the allow-list does not name at all
                "http://no-such-host.invalid/x",  // a name that does not resolve
            ]
            var messages = Set<String>()
            for (index, source) in sources.enumerated() {
                let answer = try await cluster.send(
                    .POST, "/files/probe/\(index).bin", #"{"url": "\#(source)"}"#, key: .serverCode)
                #expect(
                    answer.status == 400 && answer.json["code"] as? Int == 6032,
                    "\(source): \(answer.status) \(answer.text)")
                messages.insert(answer.json["message"] as? String ?? "")
                let stored = try await cluster.send(.GET, "/files/probe/\(index).bin?action=exists", key: .serverCode)
                #expect(stored.text == "false", "\(source) stored nothing: \(stored.text)")
            }
            #expect(messages.count == 1, "\(messages)")
        }
    }

    @Test func objectsOfMoreThanTenThousandKeysAreRefusedAsMalformed() async throws {
        try await TestCluster.shared { cluster async throws in
            let huge = "{" + (0..<200_000).map { #""k\#($0)": 1"# }.joined(separator: ",") + "}"
            let create = try await cluster.send(.POST, "/data/Probe", huge, key: .serverCode)
            #expect(create.status == 400 && create.json["code"] as? Int == 1022, "\(create.text.prefix(300))")
            #expect(
                (create.json["message"] as? String)?.contains("more than 10000 keys") == true,
                "\(create.text.prefix(300))")
            // The limit is the shared parser's, so a unit of work carrying the object meets it too.
            let work = #"{"operations": [{"operationType": "CREATE", "table": "Probe", "payload": \#(huge)}]}"#
            let unit = try await cluster.send(.POST, "/transaction/unit-of-work", work, key: .serverCode)
            #expect(unit.status == 400 && unit.json["code"] as? Int == 1022, "\(unit.text.prefix(300))")
            // An object at the limit is no parse error (its keys are nulls, which add no column).
            let atLimit = "{" + (0..<10_000).map { #""k\#($0)": null"# }.joined(separator: ",") + "}"
            let fits = try await cluster.send(.POST, "/data/Probe", atLimit, key: .serverCode)
            #expect(fits.json["code"] as? Int != 1022, "\(fits.text.prefix(300))")
        }
    }

    /// The second probe's F6: a 16 MB array of numbers, anonymously, to users-service and
    /// data-service, ran past the call deadline and starved everyone else; it is refused as
    /// malformed once the parser has read a quarter of a million values.
    @Test func hugeArraysAreRefusedAsMalformed() async throws {
        try await TestCluster.shared { cluster async throws in
            let huge = "[" + String(repeating: "1,", count: 7_999_999) + "1]"
            for path in ["/data/Probe", "/data/Probe/find", "/transaction/unit-of-work"] {
                let answer = try await cluster.send(.POST, path, huge)
                #expect(answer.status == 400, "\(path): \(answer.status) \(answer.text.prefix(300))")
                #expect(answer.text.contains("more than 250000 values"), "\(path): \(answer.text.prefix(300))")
            }
            // Registration answers any unreadable body with Backendless's 3038.
            let register = try await cluster.send(.POST, "/users/register", huge)
            #expect(register.status == 400 && register.json["code"] as? Int == 3038, "\(register.text.prefix(300))")
        }
    }

    /// The second probe's F14: error messages echoed what the request named, whole (a
    /// 10,000-character id, a 100,000-character opResultId). Messages stop at 512 characters and
    /// an opResultId at 256 bytes.
    @Test func errorMessagesAndResultIdsAreBounded() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/data/Echo", #"{"code": "x"}"#)
            let long = String(repeating: "q", count: 10_000)
            let missing = try await cluster.send(.GET, "/data/Echo/\(long)")
            #expect(missing.status == 404, "\(missing.text.prefix(200))")
            let message = try #require(missing.json["message"] as? String)
            #expect(message.count <= 512 && message.hasSuffix("…"), "\(message.count) characters")
            let named = String(repeating: "r", count: 100_000)
            let work =
                #"{"operations": [{"operationType": "CREATE", "table": "Echo", "opResultId": "\#(named)", "payload": {"code": "y"}}]}"#
            let unit = try await cluster.send(.POST, "/transaction/unit-of-work", work)
            #expect(unit.status == 400 && unit.text.utf8.count < 2_000, "\(unit.text.prefix(300))")
        }
    }

    @Test func theUnknownTableMessageNamesTheTableOnce() async throws {
        try await TestCluster.shared { cluster async throws in
            let table = "ProbeMissingTable"
            let read = try await cluster.send(.GET, "/data/\(table)")
            #expect(read.status == 404 && read.json["code"] as? Int == 1009, "\(read.text)")
            let work = #"{"operations": [{"operationType": "CREATE", "table": "\#(table)", "payload": {"name": "x"}}]}"#
            let unit = try await cluster.send(.POST, "/transaction/unit-of-work", work, key: .serverCode)
            let error = unit.json["error"] as? [String: Any]
            #expect(error?["code"] as? Int == 1009, "\(unit.text)")
            for message in [read.json["message"] as? String ?? "", error?["message"] as? String ?? ""] {
                #expect(Self.occurrences(of: table, in: message) == 1, "\(message)")
                #expect(Self.occurrences(of: "Table not found by name", in: message) == 1, "\(message)")
            }
        }
    }
}
