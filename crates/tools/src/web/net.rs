//! The address policy of the web tools and HTTP tools: the workspace's one policy, from
//! `switchboard-net`, re-exported where the tools have always found it.

pub use switchboard_net::{
    AddressPolicy, Blocked, GuardedResolver, ResolveError, Resolver, StandardPolicy, SystemResolver,
    find_resolve_error, non_public_reason,
};
