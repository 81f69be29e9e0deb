import Foundation
import InternalProtocol
import NIOHTTP1
import Testing
import TestSupport

/// The users API through the gateway: register, login, the token on later requests, logout.
@Suite(.timeLimit(.minutes(2))) struct UserRoutesTests {
    private func send(
        _ cluster: TestCluster, _ method: HTTPMethod, _ path: String, _ body: String? = nil, token: String? = nil
    ) async throws -> HTTPResult {
        var headers: [(String, String)] = body == nil ? [] : [("Content-Type", "application/json")]
        if let token { headers.append(("user-token", token)) }
        return try await HTTPTestClient.send(
            method, cluster.gatewayURL + cluster.prefix() + path, headers: headers, body: body.map { Data($0.utf8) })
    }

    @Test func aTokenActsForItsUserUntilLogout() async throws {
        try await TestCluster.with { cluster async throws in
            let registered = try await send(cluster, .POST, "/users/register", #"{"email": "ann@example.com", "password": "pw", "name": "Ann"}"#)
            #expect(registered.status == 200, "\(registered.text)")
            let userID = try #require(registered.json["objectId"] as? String)
            #expect(registered.json["password"] == nil)

            let login = try await send(cluster, .POST, "/users/login", #"{"login": "ann@example.com", "password": "pw"}"#)
            let token = try #require(login.json["user-token"] as? String, "\(login.text)")

            let note = try await send(cluster, .POST, "/data/Note", #"{"text": "mine"}"#, token: token)
            #expect(note.json["ownerId"] as? String == userID)
            let anonymous = try await send(cluster, .POST, "/data/Note", #"{"text": "nobody's"}"#)
            #expect(anonymous.json["ownerId"] is NSNull)
            let info = try await send(cluster, .GET, "/info", token: token)
            #expect((info.json["roles"] as? [String]) == ["AuthenticatedUser", "RestUser"])

            let users = try await send(cluster, .GET, "/data/Users?props=*", token: token)
            #expect(users.text.contains(userID) && !users.text.contains("password") && !users.text.contains("pw\""))
            let smuggled = try await send(cluster, .PUT, "/data/Users/\(userID)", #"{"password": "plain"}"#, token: token)
            #expect(smuggled.status == 400 && smuggled.json["code"] as? Int == 1022)
            let respelled = try await send(cluster, .PUT, "/data/Users/\(userID)", #"{"PassWord": "plain"}"#, token: token)
            #expect(respelled.status == 400 && respelled.json["code"] as? Int == 1022)
            let columns = try await send(cluster, .GET, "/data/Users/properties")
            #expect(!columns.text.lowercased().contains("password"), "\(columns.text)")

            #expect(try await send(cluster, .GET, "/users/isvalidusertoken/\(token)").text == "true")
            let logout = try await send(cluster, .GET, "/users/logout", token: token)
            #expect(logout.status == 200)
            #expect(try await send(cluster, .GET, "/users/isvalidusertoken/\(token)").text == "false")
            let stale = try await send(cluster, .GET, "/data/Note", token: token)
            #expect(stale.status == 401 && stale.json["code"] as? Int == 3064)
            let again = try await send(cluster, .GET, "/users/logout", token: token)
            #expect(again.json["code"] as? Int == 3064)
            let withoutToken = try await send(cluster, .GET, "/users/logout")
            #expect(withoutToken.status == 401 && withoutToken.json["code"] as? Int == 3028)
        }
    }

    @Test func malformedBodiesUseTheSeedCodes() async throws {
        try await TestCluster.with { cluster async throws in
            let duplicate = try await send(cluster, .POST, "/users/register", #"{"email": "a@b.co", "email": "c@d.co", "password": "p"}"#)
            #expect(duplicate.status == 400 && duplicate.json["code"] as? Int == 3043)
            let notJSON = try await send(cluster, .POST, "/users/register", "email=a")
            #expect(notJSON.json["code"] as? Int == 3038)
            let wrong = try await send(cluster, .POST, "/users/login", #"{"login": "nobody@b.co", "password": "p"}"#)
            #expect(wrong.status == 401 && wrong.json["code"] as? Int == 3003)
            #expect(wrong.json["message"] as? String == "Invalid login or password.")
        }
    }
}
