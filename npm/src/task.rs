//! Work done on the libuv pool, and its result given back to JavaScript as a promise's.

use napi::bindgen_prelude::*;

/// A closure run on the libuv pool; its output resolves the promise.
pub struct Work<T>(Option<Box<dyn FnOnce() -> Result<T> + Send>>);

impl<T: ToNapiValue + TypeName + Send + 'static> Work<T> {
    pub fn spawn(work: impl FnOnce() -> Result<T> + Send + 'static) -> AsyncTask<Work<T>> {
        AsyncTask::new(Work(Some(Box::new(work))))
    }
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Work<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> Result<T> {
        match self.0.take() {
            Some(work) => work(),
            None => Err(Error::from_reason("the work was already done")),
        }
    }

    fn resolve(&mut self, _: Env, output: T) -> Result<T> {
        Ok(output)
    }
}
