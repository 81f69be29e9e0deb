import DataService
import ServiceRuntime

/// data-service: `serve` (default), `migrate`, `pki-init [DIR]`.
@main
struct DataServiceMain {
    static func main() async {
        await ServiceCommand.exitOnError {
            try await ServiceCommand.main(DataService.self, arguments: Array(CommandLine.arguments.dropFirst()))
        }
    }
}
