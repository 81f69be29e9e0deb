import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// A file stored through an object's file field belongs to the object: whoever may find the
/// object reads and lists it, whoever may update the object replaces or deletes it, and nobody
/// else, through the file API as through the file field.
@Suite(.timeLimit(.minutes(20))) struct FileFieldPermissionTests {
    @Test func fileFieldFilesFollowTheirObjectsRights() async throws {
        try await FileCluster.with { files async throws in
            let cluster = files.cluster
            func send(
                _ method: HTTPMethod, _ path: String, _ body: String? = nil, token: String? = nil,
                key: APIKeyKind = .rest
            ) async throws -> HTTPResult {
                try await cluster.send(method, path, body, token: token, key: key)
            }
            func upload(_ path: String, _ text: String, token: String?) async throws -> HTTPResult {
                let form = MultipartForm(file: Array(text.utf8), name: "secret.txt")
                var headers = [("Content-Type", form.contentType)]
                if let token { headers.append(("user-token", token)) }
                return try await HTTPTestClient.send(.POST, files.base + path, headers: headers, body: Data(form.body))
            }

            // An owner-only table: REST callers find, update, remove and share their own objects only.
            let schema = try await send(
                .POST, "/data/Doc/schema",
                #"[{"name": "att", "type": "FILE_REF"}, {"name": "title", "type": "STRING"}]"#,
                key: .serverCode)
            #expect(schema.status == 200, "\(schema.text)")
            for operation in ["FIND", "UPDATE", "REMOVE", "PERMISSION"] {
                let denied = try await send(
                    .PUT, "/data/Doc/permissions/DENY", #"{"permission": "\#(operation)", "role": "RestUser"}"#,
                    key: .serverCode)
                let owned = try await send(
                    .PUT, "/data/Doc/permissions/owner/GRANT", #"{"permission": "\#(operation)"}"#, key: .serverCode)
                #expect(denied.status == 200 && owned.status == 200, "\(operation): \(denied.text) \(owned.text)")
            }
            let alice = try await cluster.account("alice@example.com")
            let bob = try await cluster.account("bob@example.com")
            let created = try await send(.POST, "/data/Doc", #"{"title": "mine"}"#, token: alice.token)
            let id = try #require(created.json["objectId"] as? String, "\(created.text)")
            let path = "Doc/\(id)/att/secret.txt"
            let stored = try await upload("/data/Doc/\(id)/file?field_name=att", "alice's secret", token: alice.token)
            #expect(
                stored.status == 200 && (stored.json["att"] as? String)?.hasSuffix("/files/" + path) == true,
                "\(stored.text)")

            // Neither an anonymous caller nor Bob reads, lists, replaces, moves or deletes it.
            for (who, token) in [("anonymous", nil), ("Bob", bob.token)] as [(String, String?)] {
                // The object's own directory too: its name is the object's id (second probe, F11).
                let reads = [
                    "/files/" + path, "/files/\(path)?action=exists", "/files/Doc/\(id)/att",
                    "/data/Doc/\(id)/file?field_name=att",
                    "/files/Doc/\(id)", "/files/Doc/\(id)?action=exists",
                ]
                for read in reads {
                    let refused = try await send(.GET, read, token: token)
                    #expect(
                        refused.status == 403 && !refused.text.contains("alice's secret"),
                        "\(who) GET \(read): \(refused.text)")
                }
                for listing in ["/files/Doc?sub=true", "/files?sub=true", "/files/Doc"] {
                    let listed = try await send(.GET, listing, token: token)
                    #expect(
                        listed.status == 200 && !listed.text.contains("secret.txt") && !listed.text.contains("/att"),
                        "\(who) lists \(listing): \(listed.text)")
                    #expect(!listed.text.contains(id), "\(who) learns the object's id from \(listing): \(listed.text)")
                }
                let counted = try await send(.GET, "/files/Doc?sub=true&action=count", token: token)
                #expect(counted.text == "0", "\(who) counts: \(counted.text)")
                let overwrite = try await upload("/files/\(path)?overwrite=true", "forged by \(who)", token: token)
                #expect(
                    overwrite.status == 403 && overwrite.json["code"] as? Int == 4000,
                    "\(who) overwrites: \(overwrite.text)")
                let field = try await upload("/data/Doc/\(id)/file?field_name=att", "forged by \(who)", token: token)
                #expect(field.status == 403, "\(who) uploads to the field: \(field.text)")
                for target in [path, "Doc/\(id)/att", "Doc/\(id)", "Doc"] {
                    let deleted = try await send(.DELETE, "/files/" + target, token: token)
                    #expect(
                        deleted.status == 403 && deleted.json["code"] as? Int == 4000,
                        "\(who) deletes \(target): \(deleted.text)")
                }
                for (command, body) in [
                    ("move", #"{"sourcePath": "/\#(path)", "targetPath": "/loot"}"#),
                    ("rename", #"{"oldPathName": "/Doc", "newName": "Loot"}"#),
                    ("copy", #"{"sourcePath": "/Doc", "targetPath": "/loot"}"#),
                ] {
                    let refused = try await send(.PUT, "/files/" + command, body, token: token)
                    #expect(
                        refused.status == 403 && refused.json["code"] as? Int == 4000,
                        "\(who) \(command): \(refused.text)")
                }
                let emptied = try await send(.DELETE, "/data/Doc/\(id)/file?field_name=att", token: token)
                #expect(emptied.status == 403, "\(who) empties the field: \(emptied.text)")
            }

            // Alice reads and lists hers, the server-code key too; nothing above changed it.
            let own = try await send(.GET, "/files/" + path, token: alice.token)
            #expect(own.status == 200 && own.text == "alice's secret", "\(own.text)")
            #expect(
                try await send(.GET, "/data/Doc/\(id)/file?field_name=att", token: alice.token).text == "alice's secret"
            )
            #expect(try await send(.GET, "/files/Doc?sub=true", token: alice.token).text.contains("secret.txt"))
            let server = try await send(.GET, "/files/" + path, key: .serverCode)
            #expect(server.status == 200 && server.text == "alice's secret", "\(server.text)")
            #expect(try await send(.GET, "/files/Doc?sub=true", key: .serverCode).text.contains("secret.txt"))
            #expect(
                try await send(.GET, "/files/Doc?sub=true", key: .serverCode).text.components(separatedBy: "\"name\"")
                    .count == 2)

            // An object ACL that lets Bob find the object lets him read the file, still not replace it.
            let grant = try await send(
                .PUT, "/data/Doc/permissions/GRANT/\(id)", #"{"permission": "FIND", "user": "\#(bob.id)"}"#,
                token: alice.token)
            #expect(grant.status == 200, "\(grant.text)")
            let shared = try await Self.eventually({ try await send(.GET, "/files/" + path, token: bob.token) }) {
                $0.status == 200
            }
            #expect(shared.status == 200 && shared.text == "alice's secret", "\(shared.text)")
            #expect(try await send(.GET, "/files/Doc?sub=true", token: bob.token).text.contains("secret.txt"))
            let replaced = try await upload("/files/\(path)?overwrite=true", "forged by Bob", token: bob.token)
            #expect(replaced.status == 403 && replaced.json["code"] as? Int == 4000, "\(replaced.text)")
            #expect(try await send(.DELETE, "/files/" + path, token: bob.token).status == 403)

            // Once the object is gone its file is the server-code key's alone, to clear up.
            let removed = try await send(.DELETE, "/data/Doc/\(id)", token: alice.token)
            #expect(removed.status == 200, "\(removed.text)")
            let orphan = try await send(.GET, "/files/" + path, token: alice.token)
            #expect(orphan.status == 403 && orphan.json["code"] as? Int == 4000, "\(orphan.text)")
            #expect(try await send(.GET, "/files/" + path, key: .serverCode).text == "alice's secret")
            #expect(try await send(.DELETE, "/files/" + path, key: .serverCode).status == 200)
            #expect(try await send(.GET, "/files/\(path)?action=exists", key: .serverCode).text == "false")
        }
    }

    /// `request`'s answer once `done` holds, asked again for up to 5 s: a permission change made
    /// through data-service reaches files-service's catalog cache by notification.
    private static func eventually(
        _ request: () async throws -> HTTPResult, until done: (HTTPResult) -> Bool
    ) async throws -> HTTPResult {
        var answer = try await request()
        var attempts = 0
        while !done(answer) && attempts < 50 {
            attempts += 1
            try await Task.sleep(for: .milliseconds(100))
            answer = try await request()
        }
        return answer
    }
}
