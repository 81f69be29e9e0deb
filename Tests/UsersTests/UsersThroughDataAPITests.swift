import Foundation
import TestSupport
import Testing

/// The JS SDK's `persistence.js` saves and bulk-creates `Users` rows `{email, name, password}`
/// through `Backendless.Data.of('Users')`: each is a registration under the users API's rules,
/// the password hashed and never answered; a bulk create registers every user or none.
@Suite(.timeLimit(.minutes(20))) struct UsersThroughDataAPITests {
    private static func user(_ email: String, password: String? = "secret1") -> String {
        let password = password.map { #", "password": "\#($0)""# } ?? ""
        return #"{"email": "\#(email)", "name": "\#(email.prefix(3))"\#(password)}"#
    }

    private static func logsIn(_ cluster: TestCluster, _ email: String) async throws -> Bool {
        let login = try await cluster.send(
            .POST, "/users/login", #"{"login": "\#(email)", "password": "secret1"}"#)
        return login.status == 200 && login.json["user-token"] is String
    }

    @Test func aSaveAndABulkCreateWithPasswordsRegisterUsersAndNeverAnswerThePassword() async throws {
        try await TestCluster.shared { cluster async throws in
            let saved = try await cluster.send(.POST, "/data/Users", Self.user("single@example.com"))
            #expect(saved.status == 200 && saved.json["objectId"] is String, "\(saved.text)")
            #expect(saved.json["password"] == nil && !saved.text.contains("secret1"), "\(saved.text)")

            let bulk = try await cluster.send(
                .POST, "/data/bulk/Users", "[\(Self.user("first@example.com")), \(Self.user("second@example.com"))]")
            #expect(bulk.status == 200, "\(bulk.text)")
            let ids = try #require(try JSONSerialization.jsonObject(with: Data(bulk.text.utf8)) as? [String])
            #expect(ids.count == 2)
            for email in ["single@example.com", "first@example.com", "second@example.com"] {
                #expect(try await Self.logsIn(cluster, email), "\(email) registered with its password")
            }
            let listed = try await cluster.send(.GET, "/data/Users?pageSize=100", key: .serverCode)
            #expect(listed.status == 200 && !listed.text.contains("secret1") && !listed.text.contains("\"password\""))
            for id in ids {
                let row = try await cluster.send(.GET, "/data/Users/\(id)", key: .serverCode)
                #expect(row.json["userStatus"] as? String == "ENABLED" && row.json["password"] == nil, "\(row.text)")
            }
        }
    }

    @Test func aBulkRegistrationThatCannotBeWholeRegistersNobody() async throws {
        try await TestCluster.shared { cluster async throws in
            let cases: [(String, String, Int)] = [
                (
                    "the same address twice",
                    "[\(Self.user("twice@example.com")), \(Self.user("twice@example.com"))]", 3033
                ),
                (
                    "one without a password",
                    "[\(Self.user("kept@example.com")), \(Self.user("bare@example.com", password: nil))]", 3011
                ),
                ("a bad address", "[\(Self.user("ok@example.com")), \(Self.user("not-an-address"))]", 3040),
                (
                    "a value its column cannot hold",
                    #"[{"email": "typed@example.com", "password": "secret1", "shoeSize": 42},"#
                        + #" {"email": "untyped@example.com", "password": "secret1", "shoeSize": "big"}]"#, 3021
                ),
            ]
            for (what, body, code) in cases {
                let answer = try await cluster.send(.POST, "/data/bulk/Users", body)
                #expect(answer.json["code"] as? Int == code, "\(what): \(answer.status) \(answer.text)")
                #expect((400..<500).contains(answer.status), "\(what): \(answer.status)")
            }
            for email in ["twice@example.com", "kept@example.com", "ok@example.com", "typed@example.com"] {
                #expect(try await !Self.logsIn(cluster, email), "\(email) was registered by a refused batch")
            }
            let converting = try await cluster.send(
                .POST, "/data/bulk/Users", #"[{"objectId": "x", "email": "g@example.com", "password": "secret1"}]"#)
            #expect(converting.status == 400, "\(converting.text)")
            let tooMany = "[" + (0...100).map { Self.user("u\($0)@example.com") }.joined(separator: ",") + "]"
            let refused = try await cluster.send(.POST, "/data/bulk/Users", tooMany)
            #expect(refused.status == 400, "\(refused.status) \(refused.text.prefix(200))")
        }
    }
}
