import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// The users API through the gateway: register, login, the token on later requests, logout.
@Suite(.timeLimit(.minutes(20))) struct UserRoutesTests {
    @Test func aTokenActsForItsUserUntilLogout() async throws {
        try await TestCluster.shared { cluster async throws in
            let registered = try await cluster.send(
                .POST, "/users/register", #"{"email": "ann@example.com", "password": "pw", "name": "Ann"}"#)
            #expect(registered.status == 200, "\(registered.text)")
            let userID = try #require(registered.json["objectId"] as? String)
            #expect(registered.json["password"] == nil)

            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
            let token = try #require(login.json["user-token"] as? String, "\(login.text)")

            let note = try await cluster.send(.POST, "/data/Note", #"{"text": "mine"}"#, token: token)
            #expect(note.json["ownerId"] as? String == userID)
            let anonymous = try await cluster.send(.POST, "/data/Note", #"{"text": "nobody's"}"#)
            #expect(anonymous.json["ownerId"] is NSNull)
            let info = try await cluster.send(.GET, "/info", token: token)
            #expect((info.json["roles"] as? [String]) == ["AuthenticatedUser", "RestUser"])

            let users = try await cluster.send(.GET, "/data/Users?props=*", token: token)
            #expect(users.text.contains(userID) && !users.text.contains("password") && !users.text.contains("pw\""))
            // A password saved through the data API is hashed by users-service, never stored as data.
            let rehashed = try await cluster.send(
                .PUT, "/data/Users/\(userID)", #"{"password": "plain"}"#, token: token)
            #expect(rehashed.status == 200 && !rehashed.text.contains("plain"), "\(rehashed.text)")
            let respelled = try await cluster.send(
                .PUT, "/data/Users/\(userID)", #"{"PassWord": "plain"}"#, token: token)
            #expect(respelled.status == 400 && respelled.json["code"] as? Int == 1022, "\(respelled.text)")
            let columns = try await cluster.send(.GET, "/data/Users/properties")
            #expect(!columns.text.lowercased().contains("password"), "\(columns.text)")

            #expect(try await cluster.send(.GET, "/users/isvalidusertoken/\(token)").text == "true")
            let logout = try await cluster.send(.GET, "/users/logout", token: token)
            #expect(logout.status == 200)
            #expect(try await cluster.send(.GET, "/users/isvalidusertoken/\(token)").text == "false")
            let stale = try await cluster.send(.GET, "/data/Note", token: token)
            #expect(stale.status == 401 && stale.json["code"] as? Int == 3064)
            let again = try await cluster.send(.GET, "/users/logout", token: token)
            #expect(again.json["code"] as? Int == 3064)
            let withoutToken = try await cluster.send(.GET, "/users/logout")
            #expect(withoutToken.status == 401 && withoutToken.json["code"] as? Int == 3028)
        }
    }

    @Test func malformedBodiesUseTheSeedCodes() async throws {
        try await TestCluster.shared { cluster async throws in
            let duplicate = try await cluster.send(
                .POST, "/users/register", #"{"email": "a@b.co", "email": "c@d.co", "password": "p"}"#)
            #expect(duplicate.status == 400 && duplicate.json["code"] as? Int == 3043)
            let notJSON = try await cluster.send(.POST, "/users/register", "email=a")
            #expect(notJSON.json["code"] as? Int == 3038)
            let wrong = try await cluster.send(.POST, "/users/login", #"{"login": "nobody@b.co", "password": "p"}"#)
            #expect(wrong.status == 401 && wrong.json["code"] as? Int == 3003)
            #expect(wrong.json["message"] as? String == "Invalid login or password.")
        }
    }
}
