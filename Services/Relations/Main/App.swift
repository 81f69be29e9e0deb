import RelationsService
import ServiceRuntime

/// relations-service: `serve` (default), `migrate`, `pki-init [DIR]`.
@main
struct RelationsServiceMain {
    static func main() async {
        await ServiceCommand.exitOnError {
            try await ServiceCommand.main(RelationsService.self, arguments: Array(CommandLine.arguments.dropFirst()))
        }
    }
}
