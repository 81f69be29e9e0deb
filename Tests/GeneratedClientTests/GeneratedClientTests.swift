import AsyncHTTPClient
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import TestSupport
import Testing

/// A client apple/swift-openapi-generator generated from the published description (its
/// operations in `operations.txt`, the description they were generated from in `openapi.json`,
/// the code in `Generated/`) registers, logs in, creates, finds and deletes against the running
/// system: the description is good when a generated client works. The description of those
/// operations must still be what the client was generated from (else:
/// `Deploy/generate-openapi-client.sh`).
@Suite(.timeLimit(.minutes(20))) struct GeneratedClientTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    @Test func theClientWasGeneratedFromTheDescriptionServedToday() async throws {
        try await TestCluster.shared { cluster async throws in
            let live = try await HTTPTestClient.send(.GET, cluster.gatewayURL + "/openapi.json")
            let document = FileManager.default.temporaryDirectory.appendingPathComponent("live-\(UUID()).json")
            try live.body.write(to: document)
            defer { try? FileManager.default.removeItem(at: document) }
            let operations = try String(
                contentsOf: Self.directory.appendingPathComponent("operations.txt"), encoding: .utf8
            )
            .split(separator: "\n").map(String.init)
            let subset = try await ToolRun.run(
                ["python3", "Tests/Peers/openapi-subset.py", document.path] + operations)
            #expect(subset.status == 0, "\(subset.output.prefix(2_000))")
            let committed = try String(
                contentsOf: Self.directory.appendingPathComponent("openapi.json"), encoding: .utf8)
            #expect(
                subset.output.trimmingCharacters(in: .whitespacesAndNewlines)
                    == committed.trimmingCharacters(in: .whitespacesAndNewlines),
                "The description of the generated client's operations changed: run Deploy/generate-openapi-client.sh")
        }
    }

    @Test func aGeneratedClientRegistersLogsInCreatesFindsAndDeletes() async throws {
        try await TestCluster.shared { cluster async throws in
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            defer { _ = http.shutdown() }
            let token = UserToken()
            let client = Client(
                serverURL: try #require(URL(string: cluster.gatewayURL + cluster.prefix())),
                transport: AsyncHTTPClientTransport(configuration: .init(client: http)), middlewares: [token])

            let registered = try await client.postUsersRegister(
                body: .json(.init(email: "generated@example.com", password: "pw-123")))
            #expect(try registered.ok.body.json.email == "generated@example.com")
            let session = try await client.postUsersLogin(
                body: .json(.init(login: "generated@example.com", password: "pw-123")))
            let user = try session.ok.body.json
            await token.set(user.userToken)

            let created = try await client.postDataTable(
                path: .init(table: "Note"),
                body: .json(
                    .init(
                        additionalProperties: try OpenAPIObjectContainer(unvalidatedValue: [
                            "text": "from a generated client"
                        ]))))
            let note = try created.ok.body.json
            let id = try #require(note.objectId)
            #expect(note.ownerId == user.objectId, "the token travelled: the note is the user's")

            let found = try await client.getDataTable(
                path: .init(table: "Note"), query: .init(_where: "text = 'from a generated client'"))
            let notes = try found.ok.body.json
            #expect(notes.map(\.objectId) == [id])
            #expect(notes.first?.additionalProperties.value["text"] as? String == "from a generated client")

            let deleted = try await client.deleteDataTableId(path: .init(table: "Note", id: id))
            _ = try deleted.ok.body.json
            let missing = try await client.deleteDataTableId(path: .init(table: "Note", id: id))
            guard case .default(statusCode: let status, let error) = missing else {
                Issue.record("a second delete must fail: \(missing)")
                return
            }
            let code = try error.body.json.code
            #expect(status == 404 && code == 1000)
        }
    }
}

/// Sends the logged-in user's `user-token` with every call once there is one.
actor UserToken: ClientMiddleware {
    private var token: String?

    func set(_ token: String) { self.token = token }

    nonisolated func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let token = await self.token, let name = HTTPField.Name("user-token") { request.headerFields[name] = token }
        return try await next(request, body, baseURL)
    }
}
