import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// The permission API through the gateway: table rules with the server-code key, object ACLs
/// with the Permission right, owner policy, INHERIT, and what a user then sees.
@Suite(.timeLimit(.minutes(20))) struct PermissionRoutesTests {
    private func ids(_ result: HTTPResult) -> Set<String> {
        Set(
            ((try? JSONSerialization.jsonObject(with: Data(result.text.utf8))) as? [[String: Any]] ?? []).compactMap {
                $0["objectId"] as? String
            })
    }

    @Test func tableRulesObjectACLsAndOwnerPolicyShapeWhatAUserSees() async throws {
        try await TestCluster.shared { cluster async throws in
            _ = try await cluster.send(.POST, "/users/register", #"{"email": "bob@example.com", "password": "pw"}"#)
            let login = try await cluster.send(
                .POST, "/users/login", #"{"login": "bob@example.com", "password": "pw"}"#)
            let token = try #require(login.json["user-token"] as? String)
            let mine = try #require(
                try await cluster.send(.POST, "/data/Doc", #"{"n": 1}"#, token: token).json["objectId"] as? String)
            let other = try #require(
                try await cluster.send(.POST, "/data/Doc", #"{"n": 2}"#).json["objectId"] as? String)
            let shared = try #require(
                try await cluster.send(.POST, "/data/Doc", #"{"n": 3}"#).json["objectId"] as? String)
            #expect(ids(try await cluster.send(.GET, "/data/Doc", token: token)) == [mine, other, shared])

            let denyAll = #"{"permission": "FIND", "role": "AuthenticatedUser"}"#
            let refused = try await cluster.send(.PUT, "/data/Doc/permissions/DENY", denyAll, token: token)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 1023)
            #expect(try await cluster.send(.PUT, "/data/Doc/permissions/DENY", denyAll, key: .serverCode).status == 200)
            // No ACL or owner policy could let a row through: finds and counts are refused outright.
            for path in ["/data/Doc", "/data/Doc/count", "/data/Doc/first"] {
                let denied = try await cluster.send(.GET, path, token: token)
                #expect(denied.status == 403 && denied.json["code"] as? Int == 1023, "\(path) \(denied.text)")
            }
            let hidden = try await cluster.send(.GET, "/data/Doc/\(other)", token: token)
            #expect(hidden.status == 403 && hidden.json["code"] as? Int == 1023)

            // The owner policy (layer 5) comes before the system-role table rule (layer 7)...
            let ownerFind = #"{"permission": "FIND"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/owner/GRANT", ownerFind, key: .serverCode).status
                    == 200)
            #expect(ids(try await cluster.send(.GET, "/data/Doc", token: token)) == [mine])
            // ...and an object ACL for the user (layer 1) before both; anyone with the Permission
            // right on the object may set it.
            let grantBob = #"{"permission": "FIND", "user": "\#(try #require(login.json["objectId"] as? String))"}"#
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/GRANT/\(shared)", grantBob, token: token).status
                    == 200)
            #expect(ids(try await cluster.send(.GET, "/data/Doc", token: token)) == [mine, shared])
            let unknown = try await cluster.send(.PUT, "/data/Doc/permissions/GRANT/nope", grantBob, token: token)
            #expect(unknown.status == 404 && unknown.json["code"] as? Int == 1000)

            let acl = try await cluster.send(.GET, "/data/Doc/permissions/\(shared)", token: token)
            #expect(
                acl.text.contains(#""permission":"FIND","access":"GRANT""#) && acl.text.contains(#""user":"#),
                "\(acl.text)")
            let rules = try await cluster.send(.GET, "/data/Doc/permissions", key: .serverCode)
            #expect(
                rules.text
                    == #"{"permissions":[{"role":"AuthenticatedUser","permission":"FIND","access":"DENY"}],"owner":[{"permission":"FIND","access":"GRANT"}]}"#,
                "\(rules.text)")
            #expect(try await cluster.send(.GET, "/data/Doc/permissions", token: token).status == 403)
            #expect(
                try await cluster.send(.PUT, "/data/Doc/permissions/INHERIT", denyAll, key: .serverCode).status == 200)
            #expect(ids(try await cluster.send(.GET, "/data/Doc", token: token)) == [mine, other, shared])
            // The global matrix: `*` as the table.
            let globalDeny = #"{"permission": "REMOVE", "role": "RestUser"}"#
            #expect(
                try await cluster.send(.PUT, "/data/*/permissions/DENY", globalDeny, key: .serverCode).status == 200)
            let removal = try await cluster.send(.DELETE, "/data/Doc/\(other)", token: token)
            #expect(removal.status == 403 && removal.json["code"] as? Int == 1023)
            let global = try await cluster.send(.GET, "/data/*/permissions", key: .serverCode)
            #expect(
                global.text.contains(#"{"role":"RestUser","permission":"REMOVE","access":"DENY"}"#), "\(global.text)")
            let byUser = try await cluster.send(
                .PUT, "/data/*/permissions/DENY", #"{"permission": "FIND", "user": "x"}"#, key: .serverCode)
            #expect(byUser.status == 400)

            for (path, body) in [
                ("/data/Doc/permissions/MAYBE", denyAll), ("/data/Doc/permissions/GRANT", #"{"permission": "FLY"}"#),
                ("/data/Doc/permissions/GRANT", "[]"),
            ] {
                let bad = try await cluster.send(.PUT, path, body, key: .serverCode)
                #expect(bad.status == 400 && bad.json["code"] as? Int == 1022, "\(path) \(body) → \(bad.text)")
            }
        }
    }
}
