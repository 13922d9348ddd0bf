//! Runs the keychain start-up check and prints the outcome, as a person would see it:
//! `cargo run -p switchboard-secrets --example probe`. Useful to diagnose a machine's keychain.

fn main() {
    match switchboard_secrets::KeyringStore::probe() {
        Ok(store) => println!("The system keychain works (service {}).", store.service()),
        Err(unavailable) => {
            println!("{unavailable}");
            for choice in unavailable.choices() {
                println!("  - {}", choice.label());
            }
            std::process::exit(1);
        }
    }
}
