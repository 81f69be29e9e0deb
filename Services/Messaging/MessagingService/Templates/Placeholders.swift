import DataEngine
import InternalProtocol

/// `{name}` placeholders in template texts (email and push templates). A placeholder nothing
/// fills stays as written, so CSS braces and unknown names pass through.
enum Placeholders {
    /// `text` with each `{name}` that `values` holds replaced by `escape` of its value.
    static func fill(_ text: String, _ values: [String: String], escape: (String) -> String) -> String {
        guard !values.isEmpty, text.contains("{") else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            output += rest[..<open]
            let afterOpen = rest.index(after: open)
            guard let close = rest[afterOpen...].firstIndex(of: "}"),
                let value = values[String(rest[afterOpen..<close])]
            else {
                output.append("{")
                rest = rest[afterOpen...]
                continue
            }
            output += escape(value)
            rest = rest[rest.index(after: close)...]
        }
        return output + rest
    }

    /// A send's values (`name` in the body): an object of scalars, as texts; `refusal` for anything else.
    static func values(
        _ value: JSONValue?, _ name: String, refusal: (String) -> ErrorEnvelope
    ) throws(ErrorEnvelope) -> [String: String] {
        switch value {
        case nil, .null?: return [:]
        case .object(let members)?:
            var values: [String: String] = [:]
            for (key, member) in members.members {
                guard let text = member.templateText else {
                    throw refusal("Template value '\(key.prefix(64))' must be a string, a number or a boolean")
                }
                values[key] = text
            }
            return values
        default: throw refusal("'\(name)' must be an object")
        }
    }
}

extension JSONValue {
    /// A scalar as a template shows it (null as empty); nil for arrays and objects.
    var templateText: String? {
        switch self {
        case .string(let text): text
        case .null: ""
        case .integer, .number, .bool: jsonText
        case .array, .object, .raw: nil
        }
    }
}
