from django.apps import AppConfig


class NormagptConfig(AppConfig):
    name = "normagpt"
    verbose_name = "NormaGPT norms agent"
