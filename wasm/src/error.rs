//! `core::Error` as a real JS `Error` (js.md §4), and back.
//!
//! An error becomes an instance of the class the package registers with
//! [`set_error_class`] (its `LangonrockError`), or a plain `Error` named `LangonrockError`
//! before one is registered. Its `message` is the core's exact text and `code` its stable
//! code; `INDETERMINATE_COMMIT` adds `revision`, a failed precondition `reason`, a refused
//! `transact` `changes`. A validation failure tied to one change also keeps the change's
//! index, in a side table rather than on the object, so that the tool renderers can name
//! it when the error comes back through [`from_js`].

use js_sys::{Array, Function, Object, Reflect, WeakMap};
use langonrock_core::error::{ChangeFailure, ConflictReason};
use langonrock_core::Error;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

thread_local! {
    static CLASS: RefCell<Option<Function>> = const { RefCell::new(None) };
    static INDEXES: WeakMap = WeakMap::new();
}

/// Registers the constructor `(code, message, extra)` of the package's error class.
pub fn set_error_class(class: Function) {
    CLASS.with(|c| *c.borrow_mut() = Some(class));
}

fn set(o: &Object, key: &str, v: &JsValue) {
    let _ = Reflect::set(o, &JsValue::from_str(key), v);
}

/// The JS error for a core error.
pub fn to_js(e: &Error) -> JsValue {
    let extra = Object::new();
    match e {
        Error::IndeterminateCommit { revision } => {
            set(&extra, "revision", &JsValue::from_str(revision));
        }
        Error::Conflict {
            reason, changes, ..
        } => {
            if let Some(r) = reason {
                set(&extra, "reason", &JsValue::from_str(r.as_str()));
            }
            if !changes.is_empty() {
                let list = Array::new();
                for c in changes {
                    let o = Object::new();
                    set(&o, "index", &JsValue::from_f64(c.index as f64));
                    set(&o, "reason", &JsValue::from_str(c.reason.as_str()));
                    list.push(&o);
                }
                set(&extra, "changes", &list);
            }
        }
        _ => {}
    }
    let code = JsValue::from_str(e.code());
    let message = JsValue::from_str(&e.message());
    let made = CLASS.with(|c| {
        c.borrow()
            .as_ref()
            .and_then(|class| Reflect::construct(class, &Array::of3(&code, &message, &extra)).ok())
    });
    let err = match made {
        Some(v) => v,
        None => {
            let plain = js_sys::Error::new(&e.message());
            plain.set_name("LangonrockError");
            set(&plain, "code", &code);
            for key in ["revision", "reason", "changes"] {
                if let Ok(v) = Reflect::get(&extra, &JsValue::from_str(key)) {
                    if !v.is_undefined() {
                        set(&plain, key, &v);
                    }
                }
            }
            plain.into()
        }
    };
    if let Error::InvalidChange { index, .. } = e {
        if let Some(o) = err.dyn_ref::<Object>() {
            INDEXES.with(|m| {
                m.set(o, &JsValue::from_f64(*index as f64));
            });
        }
    }
    err
}

fn text(v: &JsValue, key: &str) -> Option<String> {
    Reflect::get(v, &JsValue::from_str(key))
        .ok()
        .and_then(|x| x.as_string())
}

fn reason(s: &str) -> Option<ConflictReason> {
    match s {
        "exists" => Some(ConflictReason::Exists),
        "missing" => Some(ConflictReason::Missing),
        "changed" => Some(ConflictReason::Changed),
        _ => None,
    }
}

/// The core error a JS error stands for: the package's errors map back exactly; anything
/// else thrown (a store's own `TypeError`, say) counts as a `STORE` failure with its message.
pub fn from_js(v: &JsValue) -> Error {
    let message = text(v, "message").unwrap_or_else(|| {
        v.as_string()
            .unwrap_or_else(|| "unknown failure".to_string())
    });
    let index = v
        .dyn_ref::<Object>()
        .and_then(|o| INDEXES.with(|m| m.get(o)).as_f64().map(|n| n as usize));
    match text(v, "code").as_deref() {
        Some("INVALID") => match index {
            Some(index) => Error::InvalidChange { message, index },
            None => Error::Invalid(message),
        },
        Some("NOT_FOUND") => Error::NotFound(message),
        Some("CONFLICT") => {
            let changes = Reflect::get(v, &JsValue::from_str("changes"))
                .ok()
                .filter(Array::is_array)
                .map(|c| {
                    Array::from(&c)
                        .iter()
                        .filter_map(|item| {
                            Some(ChangeFailure {
                                index: Reflect::get(&item, &JsValue::from_str("index"))
                                    .ok()?
                                    .as_f64()? as usize,
                                reason: reason(&text(&item, "reason")?)?,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Error::Conflict {
                message,
                reason: text(v, "reason").as_deref().and_then(reason),
                changes,
            }
        }
        Some("INDETERMINATE_COMMIT") => Error::IndeterminateCommit {
            revision: text(v, "revision").unwrap_or_default(),
        },
        Some("CORRUPT") => Error::Corrupt(message),
        Some("UNAUTHORIZED") => Error::Unauthorized(message),
        Some("FORBIDDEN") => Error::Forbidden(message),
        _ => Error::Store(message),
    }
}
