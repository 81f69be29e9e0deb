import Foundation
import InternalProtocol
import NIOHTTP1

/// Seeds an app with what the published description's examples name (``DocumentExamples``): the
/// `Example` table with its object and `friends` relation, a user, a file, a role, templates, a
/// device registration, a geo category and a geofence. Every step goes through the public API
/// with the server-code key, as a developer would.
package enum DocumentExampleSeed {
    /// Seeds `cluster`'s app; throws naming the step that failed.
    package static func seed(_ cluster: TestCluster) async throws {
        for (method, path, body) in steps + userSteps + recordSteps { try await step(cluster, method, path, body) }
        typealias E = DocumentExamples
        for file in [E.filePath, E.disposableFile] { try await upload("/files/" + file, cluster) }
        for (table, id) in [(E.table, E.objectID), (E.disposableTable, E.detachedObjectID)] {
            try await upload("/data/\(table)/\(id)/file?field_name=\(E.fileColumn)", cluster)
        }
    }

    /// Saves a geo point in ``DocumentExamples/geoCategory`` and Default and answers its id (which
    /// the server chooses, so no example in the description can name it). Default keeps it when a
    /// fuzzer removes the example category (a removal deletes the points only in that category).
    package static func seedGeoPoint(_ cluster: TestCluster) async throws -> String {
        let body =
            #"{"latitude": 40.7128, "longitude": -74.006, "categories": ["\#(DocumentExamples.geoCategory)", "Default"]}"#
        let result = try await cluster.send(.POST, "/geo/points", body, key: .serverCode)
        let saved = try JSONSerialization.jsonObject(with: Data(result.text.utf8)) as? [String: Any]
        guard let point = saved?["geopoint"] as? [String: Any], let id = point["objectId"] as? String else {
            throw TestClusterFailure(description: "seeding a geo point: \(result.status) \(result.text)")
        }
        return id
    }

    /// The requests that make the examples, in order.
    static var steps: [(HTTPMethod, String, String?)] {
        typealias E = DocumentExamples
        let (id, table, disposable) = (E.objectID, E.table, E.disposableTable)
        let unlinked = E.unlinkedObjectID
        let fence = { (name: String) in
            #"{"name": "\#(name)", "type": "RECT", "nodes": [{"latitude": 41, "longitude": -109}, {"latitude": 37, "longitude": -102}], "actions": {"onenter": {"type": "EVENT", "eventname": "entered"}, "onstay": {"type": "EVENT", "eventname": "stayed"}, "onexit": {"type": "EVENT", "eventname": "left"}}}"#
        }
        return [
            (.POST, "/data/\(table)", #"{"objectId": "\#(id)", "name": "example"}"#),
            (.POST, "/data/\(table)/schema", #"[{"name": "\#(E.fileColumn)", "type": "FILE_REF"}]"#),
            (.POST, "/data/\(table)/\(id)/\(E.relation):\(table):n", #"["\#(id)"]"#),
            (
                .POST, "/data/bulk/\(disposable)",
                #"[{"objectId": "\#(E.removedObjectID)", "\#(E.disposableColumn)": 1}, {"objectId": "\#(unlinked)"}, {"objectId": "\#(E.quickBloxRemovedID)"}, {"objectId": "\#(E.detachedObjectID)"}, {"objectId": "\#(E.bodyRemovedObjectID)"}]"#
            ),
            (.POST, "/data/\(disposable)/\(unlinked)/\(E.relation):\(disposable):n", #"["\#(unlinked)"]"#),
            (.POST, "/data/\(disposable)/schema", #"[{"name": "\#(E.fileColumn)", "type": "FILE_REF"}]"#),
            (.POST, "/data/\(E.clearedTable)", #"{"name": "cleared"}"#),
            (.POST, "/data/\(E.droppedTable)", #"{"name": "dropped"}"#),
            (.POST, "/users/register", #"{"email": "\#(E.email)", "password": "example-pw"}"#),
            (.PUT, "/users/roles/\(E.role)", nil),
            (.PUT, "/users/roles/\(E.disposableName)", nil),
            (
                .PUT, "/emailtemplate/\(E.template)",
                #"{"subject": "Hello", "bodyparts": {"textmessage": "Hello {name}"}}"#
            ),
            (.PUT, "/emailtemplate/\(E.disposableName)", #"{"subject": "Bye", "bodyparts": {"textmessage": "Bye"}}"#),
            (.PUT, "/messaging/pushtemplates/\(E.template)", #"{"channel": "\#(E.channel)", "message": "Hello"}"#),
            (.PUT, "/messaging/pushtemplates/\(E.disposableName)", #"{"channel": "\#(E.channel)", "message": "Bye"}"#),
            (
                .POST, "/messaging/registrations",
                #"{"deviceToken": "ab12", "deviceId": "\#(E.deviceID)", "os": "ANDROID", "osVersion": "14"}"#
            ),
            (
                .POST, "/messaging/registrations",
                #"{"deviceToken": "cd34", "deviceId": "\#(E.disposableDevice)", "os": "ANDROID", "osVersion": "14"}"#
            ),
            (.POST, "/messaging/\(E.disposableName)", #"{"message": "hello"}"#),
            (.PUT, "/geo/categories/\(E.geoCategory)", nil),
            (.PUT, "/geo/categories/\(E.disposableName)", nil),
            (.POST, "/geo/fences", fence(E.geofence)),
            (.POST, "/geo/fences", fence(E.disposableName)),
        ]
    }

    /// The requests that make the users the profile and email routes name, and give the example
    /// user its role: after ``steps``, whose registration they need. The users named by objectId
    /// are saved through the data API with the server-code key (a save that takes an objectId),
    /// then get an address and a password through `PUT /users/{id}` and a status.
    static var userSteps: [(HTTPMethod, String, String?)] {
        typealias E = DocumentExamples
        let credentials = { (email: String) in #"{"email": "\#(email)", "password": "\#(E.password)"}"# }
        let status = { (value: String) in #"{"userStatus": "\#(value)"}"# }
        return [
            (.POST, "/users/assignRole", #"{"user": "\#(E.email)", "roleName": "\#(E.role)"}"#),
            (.POST, "/data/Users", #"{"objectId": "\#(E.profileUserID)"}"#),
            (.PUT, "/users/\(E.profileUserID)", credentials(E.profileEmail)),
            (.PUT, "/users/\(E.profileUserID)/status", status("ENABLED")),
            (.POST, "/data/Users", #"{"objectId": "\#(E.pendingUserID)"}"#),
            (.PUT, "/users/\(E.pendingUserID)", credentials(E.pendingEmail)),
            (.PUT, "/users/\(E.pendingUserID)/status", status("EMAIL_CONFIRMATION_PENDING")),
        ]
    }

    /// The object of `Example` QuickBlox's update route changes (``DocumentExamples/quickBloxUpdatedID``).
    static var recordSteps: [(HTTPMethod, String, String?)] {
        let id = DocumentExamples.quickBloxUpdatedID
        return [(.POST, "/data/\(DocumentExamples.table)", #"{"objectId": "\#(id)", "name": "updated"}"#)]
    }

    private static func step(_ cluster: TestCluster, _ method: HTTPMethod, _ path: String, _ body: String? = nil)
        async throws
    {
        let result = try await cluster.send(method, path, body, key: .serverCode)
        guard (200..<300).contains(result.status) else {
            throw TestClusterFailure(description: "seeding \(method) \(path): \(result.status) \(result.text)")
        }
    }

    /// A multipart upload to `route` (`/files/{path}`, or an object's file field).
    private static func upload(_ route: String, _ cluster: TestCluster) async throws {
        let boundary = "example-boundary"
        let path = route.split(separator: "?")[0]
        let name = path.split(separator: "/").last.map(String.init) ?? "file"
        let body =
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n"
            + "Content-Type: text/plain\r\n\r\nHello\r\n--\(boundary)--\r\n"
        let result = try await HTTPTestClient.send(
            .POST, cluster.gatewayURL + cluster.prefix(.serverCode) + route,
            headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], body: Data(body.utf8))
        guard (200..<300).contains(result.status) else {
            throw TestClusterFailure(description: "seeding the file \(route): \(result.status) \(result.text)")
        }
    }
}
