import Foundation
import InternalProtocol
import TestSupport
import Testing

/// `FILE_REF` values that reach others than their writer carry no API key but the receiver's
/// own: a change event gives each real-time subscriber the URL under the key it connected
/// with, an email filled from found users gets the path; the writer's own answers keep the
/// writer's URLs.
@Suite(.timeLimit(.minutes(20))) struct RealTimeKeyLeakTests {
    static let publicURL = "https://files.example.test"

    /// `value` as JSON text.
    static func text(_ value: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed]), as: UTF8.self)
    }

    /// The kinds of the app's keys, other than `own`, that `text` holds (in any case).
    static func foreignKeys(in text: String, of cluster: TestCluster, own: APIKeyKind?) -> [APIKeyKind] {
        let lowered = text.lowercased()
        return cluster.app.keys.filter { $0.key != own && lowered.contains($0.value.lowercased()) }.map(\.key)
    }

    @Test func changeEventsCarryOnlyEachSubscribersOwnKey() async throws {
        try await TestCluster.with(environment: ["BAAS_FILES_PUBLIC_URL": Self.publicURL]) { cluster async throws in
            let schema = try await cluster.send(
                .POST, "/data/Docs/schema",
                #"[{"name": "att", "type": "FILE_REF"}, {"name": "title", "type": "STRING"}]"#,
                key: .serverCode)
            #expect(schema.status == 200, "\(schema.text)")
            let reader = try await cluster.account("reader@example.com")
            let (appID, keys) = (cluster.app.id, cluster.app.keys)
            try await RTClient.with(gatewayURL: cluster.gatewayURL, app: appID, key: keys[.js]!, token: reader.token) {
                member in
                try await RTClient.with(gatewayURL: cluster.gatewayURL, app: appID, key: keys[.ios]!) { guest in
                    try member.subscribe("C", "created", "Docs")
                    try member.subscribe("U", "updated", "Docs")
                    try await member.ready(["C", "U"])
                    try guest.subscribe("C", "created", "Docs")
                    try await guest.ready(["C"])

                    // Server code writes: its own answers carry its URLs, as before.
                    let writerFiles = Self.publicURL + cluster.prefix(.serverCode) + "/files/"
                    let created = try await cluster.send(
                        .POST, "/data/Docs", #"{"title": "a", "att": "ssrf/b.txt"}"#, key: .serverCode)
                    #expect(created.json["att"] as? String == writerFiles + "ssrf/b.txt", "\(created.text)")
                    let id = try #require(created.json["objectId"] as? String)
                    let updated = try await cluster.send(
                        .PUT, "/data/Docs/\(id)", #"{"att": "/ssrf/c d.txt"}"#, key: .serverCode)
                    #expect(updated.json["att"] as? String == writerFiles + "ssrf/c%20d.txt", "\(updated.text)")

                    try await member.wait { _ in
                        (try? member.data("C").count) == 1 && (try? member.data("U").count) == 1
                    }
                    try await guest.wait { _ in (try? guest.data("C").count) == 1 }
                    // Each subscriber gets the file under the key it connected with, and no other key.
                    let subscribers: [(client: RTClient, kind: APIKeyKind)] = [(member, .js), (guest, .ios)]
                    for (client, kind) in subscribers {
                        let received = try Self.text(client.events().map { $0.data ?? NSNull() })
                        #expect(Self.foreignKeys(in: received, of: cluster, own: kind).isEmpty, "\(kind): \(received)")
                        let object = try #require(try client.data("C").first as? [String: Any])
                        #expect(
                            object["objectId"] as? String == id && object["title"] as? String == "a",
                            "\(kind): \(object)")
                        let ownFiles = Self.publicURL + cluster.prefix(kind) + "/files/"
                        #expect(object["att"] as? String == ownFiles + "ssrf/b.txt", "\(kind): \(object)")
                    }
                    // The update event holds what a find with the member's key answers.
                    let memberUpdate = try #require(try member.data("U").first as? [String: Any])
                    let asMember = try await cluster.send(.GET, "/data/Docs/\(id)", key: .js)
                    let memberFiles = Self.publicURL + cluster.prefix(.js) + "/files/"
                    #expect(asMember.json["att"] as? String == memberFiles + "ssrf/c%20d.txt", "\(asMember.text)")
                    #expect(memberUpdate["att"] as? String == asMember.json["att"] as? String, "\(memberUpdate)")
                }
            }

            // A unit of work copying a file's URL into a text column stores the path, which
            // anyone may read, not the writer's URL.
            let work = #"""
                {"operations": [
                  {"operationType": "CREATE", "table": "Docs", "opResultId": "doc", "payload": {"title": "w", "att": "ssrf/e.txt"}},
                  {"operationType": "CREATE", "table": "Notes", "opResultId": "note",
                   "payload": {"link": {"___ref": true, "opResultId": "doc", "propName": "att"}}}]}
                """#
            let notesSchema = #"{"name": "link", "type": "STRING"}"#
            #expect(try await cluster.send(.POST, "/data/Notes/schema", notesSchema, key: .serverCode).status == 200)
            let done = try await cluster.send(.POST, "/transaction/unit-of-work", work, key: .serverCode)
            #expect(done.status == 200 && done.json["success"] as? Bool == true, "\(done.text)")
            let notes = try await cluster.send(.GET, "/data/Notes", key: .js)
            #expect(Self.foreignKeys(in: notes.text, of: cluster, own: .js).isEmpty, "\(notes.text)")
            let links = (try JSONSerialization.jsonObject(with: notes.body) as? [[String: Any]])?.map {
                $0["link"] as? String
            }
            #expect(links == ["ssrf/e.txt"], "\(notes.text)")
        }
    }

    @Test func templateEmailsFilledFromFoundUsersCarryNoKey() async throws {
        try await SMTPSink.with { sink async throws in
            let environment = [
                "BAAS_SMTP_HOST": "127.0.0.1", "BAAS_SMTP_PORT": "\(sink.port)", "BAAS_SMTP_STARTTLS": "off",
                "BAAS_FILES_PUBLIC_URL": Self.publicURL,
            ]
            try await TestCluster.with(environment: environment) { cluster async throws in
                // A first registration makes the Users table, which then gets a FILE_REF column.
                _ = try await cluster.account("seed@example.com")
                let schema = try await cluster.send(
                    .POST, "/data/Users/schema", #"[{"name": "avatar", "type": "FILE_REF"}]"#, key: .serverCode)
                #expect(schema.status == 200, "\(schema.text)")
                let registered = try await cluster.send(
                    .POST, "/users/register",
                    #"{"email": "ann@example.com", "password": "pw", "avatar": "pics/ann.png"}"#)
                #expect(registered.status == 200, "\(registered.text)")
                let template = #"{"subject": "Hi", "bodyparts": {"textmessage": "Avatar: {Users.avatar}"}}"#
                let put = try await cluster.send(.PUT, "/emailtemplate/avatar", template, key: .serverCode)
                #expect(put.status == 200, "\(put.text)")

                // Server code mails Ann: the email is hers, so it carries no key, only the path.
                let send = #"{"template-name": "avatar", "criteria": "email = 'ann@example.com'"}"#
                let sent = try await cluster.send(.POST, "/emailtemplate/send", send, key: .serverCode)
                #expect(sent.json["sent"] as? Int == 1, "\(sent.text)")
                let mail = try #require(try sink.messages().first)
                let text = try Self.text(mail)
                #expect(Self.foreignKeys(in: text, of: cluster, own: nil).isEmpty, "\(text)")
                #expect((mail["text"] as? String)?.hasPrefix("Avatar: pics/ann.png") == true, "\(mail)")
            }
        }
    }
}
