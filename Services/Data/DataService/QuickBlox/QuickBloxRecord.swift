import DataEngine
import InternalProtocol

/// An object as QuickBlox answers it: `_id`, `_parent_id`, `user_id` (the owner), `created_at`
/// and `updated_at` in epoch seconds, then the fields; no `___class`.
enum QuickBloxRecord {
    /// The system columns under their QuickBlox names.
    private static let renamed = [
        "objectId": "_id", "ownerId": "user_id", "created": "created_at", "updated": "updated_at",
    ]

    /// Renders an object the engine answered (JSON text). A `whole` object always carries
    /// `_parent_id` (null without one) and an `updated_at` (the creation time before any update);
    /// a projected one only what was selected.
    static func record(_ text: String, whole: Bool) throws -> JSONValue {
        guard let object = try DataError.parsingJSON(text).object else { return .null }
        var members: [(key: String, value: JSONValue)] = []
        for (key, value) in object.members where key != "___class" {
            let name = renamed[key] ?? key
            members.append((name, key == "created" || key == "updated" ? seconds(value) : value))
        }
        var record = JSONObject(members)
        if whole {
            if record["_parent_id"] == nil { record["_parent_id"] = .null }
            if record["updated_at"] == nil || record["updated_at"] == .null {
                record["updated_at"] = record["created_at"] ?? .null
            }
        }
        return .object(record)
    }

    /// Epoch milliseconds as QuickBlox's epoch seconds.
    private static func seconds(_ value: JSONValue) -> JSONValue {
        switch value {
        case .integer(let milliseconds): .integer(milliseconds / 1000)
        case .number(let milliseconds):
            Int64(exactly: (milliseconds / 1000).rounded(.towardZero)).map(JSONValue.integer) ?? value
        default: value
        }
    }

    /// The id and owner of an object the engine answered, from one reading of it.
    static func ownership(_ text: String) throws -> (id: String?, owner: String?) {
        let object = try DataError.parsingJSON(text).object
        return (object?["objectId"]?.string, object?["ownerId"]?.string)
    }
}

extension DataError {
    /// Parses JSON text the engine itself rendered; a failure is the server's, not the caller's.
    static func parsingJSON(_ text: String) throws -> JSONValue {
        do {
            return try JSONParser.parse(text, maximumDepth: 512, maximumKeys: 1 << 20)
        } catch {
            throw ErrorEnvelope.internalError
        }
    }
}
