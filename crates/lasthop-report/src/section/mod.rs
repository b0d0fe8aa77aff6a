//! The report's sections, one file each, in the order `render` writes them: the study's key
//! figure (`key_figure`), the matrix (`matrix`), the summary tables (`summary`), the published
//! values (`references`), another experiment's beside ours (`beside`), the seeds' own tables (`seeds`), the charts across replications
//! (`across`), one run's plots (`one_run`) and the appendix tables (`appendix`). Each takes the
//! page so far and appends its HTML; the helpers they share are in `crate::html`.

pub mod across;
pub mod appendix;
pub mod beside;
pub mod key_figure;
pub mod matrix;
pub mod one_run;
pub mod references;
pub mod seeds;
pub mod summary;
