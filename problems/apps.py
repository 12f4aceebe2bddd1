from django.apps import AppConfig
from django.db.models.signals import pre_save
from django.utils.translation import gettext_lazy as _


class ProblemsConfig(AppConfig):
    name = "problems"
    verbose_name = _("СДАМ ГИА problems")

    def ready(self) -> None:
        from problems import index
        from problems.models import Problem

        pre_save.connect(index.problem_saving, sender=Problem, dispatch_uid="problems.index.saving")
