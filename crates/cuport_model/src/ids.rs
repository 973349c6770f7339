//! Enums whose variants have a stable kebab-case id, used in JSON, TOML and
//! on the command line: one declaration gives the serde names, `ALL`,
//! `id()` and `from_id()`, so the four always agree.

macro_rules! id_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $id:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(
            Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize, schemars::JsonSchema,
        )]
        pub enum $name {
            $( $(#[$vmeta])* #[serde(rename = $id)] $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: [$name; [$(stringify!($variant)),+].len()] = [$($name::$variant),+];

            /// The variant's place in [`Self::ALL`] (declaration order), for
            /// tables with one slot per variant.
            pub fn index(self) -> usize {
                self as usize
            }

            /// The stable id used in JSON, TOML and on the command line.
            pub fn id(self) -> &'static str {
                match self {
                    $( $name::$variant => $id, )+
                }
            }

            pub fn from_id(id: &str) -> Option<$name> {
                match id {
                    $( $id => Some($name::$variant), )+
                    _ => None,
                }
            }
        }
    };
}

pub(crate) use id_enum;
